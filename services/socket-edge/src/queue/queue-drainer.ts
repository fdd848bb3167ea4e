import { isNotFound } from '@herald/nats';
import { queueConsumerName } from '@herald/queue';
import type { Consumer, ConsumerMessages, JsMsg } from 'nats';
import { nextTrouble } from './consumption-trouble.js';
import type { DrainContext, DrainTarget } from './drain-context.js';
import { DrainWriter } from './drain-writer.js';
import { type FoundConsumer, findQueueConsumer } from './queue-lookup.js';
import { drainSubscription } from './subscription-drain.js';

/**
 * Longest ack_wait for which a drain waits for a dead edge's orphans before its first pull: the
 * wait buys order within the 2 s reconnect contract; with a longer ack_wait (configured) the
 * orphans come late anyway, and waiting would only delay every reconnect that finds naks pending.
 */
const ORPHAN_WAIT_MAX_MS = 2000;
/** Delay before retrying a queue check that failed (JetStream unreachable), ms. */
const RETRY_MS = 2000;

type State = 'idle' | 'checking' | 'consuming';

/**
 * Drains one recipient's offline queue into that recipient's sockets on this edge.
 *
 * The recipient's durable consumer exists only while something is queued for them, so the
 * drainer starts idle and checks the queue when told to ({@link kick}: on session start, on every
 * QueuedNotice, once more shortly after the start). When the consumer exists, or the stream holds
 * a message on the recipient's subject (the consumer is then created), it consumes with a small
 * batch, writing and settling through a {@link DrainWriter}.
 *
 * The consumer's ack_wait is short (ACK_WAIT_MS, 1 s by default) so that what an edge that died
 * had in flight comes back within the reconnect contract; while this edge is alive it keeps its
 * own deliveries from expiring with `working()` every third of it. {@link stop} nakks everything
 * delivered to this edge and not acked, so it comes again at once on the next connect.
 */
export class QueueDrainer {
  readonly #ctx: DrainContext;
  readonly #target: DrainTarget;
  /** The recipient's partition stream. */
  readonly #stream: string;
  /** The writing side, made at the first consume (most sessions never find anything queued). */
  #writer: DrainWriter | undefined;
  #state: State = 'idle';
  #stopped = false;
  /** A kick arrived while a check was running: check again when it ends. */
  #again = false;
  #verifying = false;
  #consumer: Consumer | undefined;
  #run: ConsumerMessages | undefined;
  /** While stopping: deliveries that arrive are kept here, unwritten, and nakked. */
  #arriving: JsMsg[] | undefined;
  #retry: NodeJS.Timeout | undefined;
  #previous: Promise<void> | undefined;

  /**
   * @param previous the close of the recipient's previous session on this edge, when still
   *   running: the first check waits for it, so what that session nakked is redelivered before
   *   anything newer
   */
  constructor(ctx: DrainContext, target: DrainTarget, previous?: Promise<void>) {
    this.#ctx = ctx;
    this.#target = target;
    this.#previous = previous;
    this.#stream = ctx.layout.streamOf(target.account, target.recipient);
  }

  /** The recipient's durable consumer (derived when needed rather than kept per session). */
  get #name(): string {
    return queueConsumerName(this.#target.account, this.#target.recipient);
  }

  /**
   * The session's second look, QUEUE_RECHECK_MS after its start, for an event whose notice crossed
   * a cluster before the session's interest did: a check when idle, nothing when already consuming,
   * since the running pull delivers whatever was stored since (the consumer was found or created
   * moments ago, so there is nothing to verify either). In a reconnect storm this was a consumer
   * info per recipient.
   */
  recheck(): void {
    if (this.#state === 'consuming') return;
    this.kick();
  }

  /**
   * Something may have been queued: check the queue unless already consuming it (then only make
   * sure the consumer still exists, since retention may have reaped it).
   */
  kick(): void {
    if (this.#stopped) return;
    if (this.#state === 'checking') {
      this.#again = true;
    } else if (this.#state === 'consuming') {
      void this.#verifyConsumer();
    } else {
      void this.#check();
    }
  }

  /**
   * Stops consuming and nakks every delivery not acked, so it comes again at once on the next
   * connect instead of after ack_wait.
   *
   * The run's subscription is drained rather than dropped: everything the server sent before it saw
   * the unsubscribe (consume() prefetches) still reaches the callback, which holds it instead of
   * writing it. Naks wait until then and until a consumer info request, which makes the server drop
   * the run's stale pull requests (it checks their interest to report num_waiting): a redelivery
   * it could only offer to such a request waited for ack_wait (nats-server 2.9.10:
   * docs/architecture-history.md, "Socket-edge: a 2.9.10 redelivery bug").
   */
  async stop(): Promise<void> {
    if (this.#stopped) return;
    this.#stopped = true;
    clearTimeout(this.#retry);
    const writer = this.#writer;
    writer?.idle();
    writer?.hold();
    const run = this.#run;
    if (run) {
      this.#arriving = [];
      await drainSubscription(run, this.#ctx.nc);
      this.#endRun();
      const jsm = await this.#ctx.jsm;
      await jsm.consumers.info(this.#stream, this.#name).catch(() => undefined);
    }
    const held = [...(writer?.takeUnsettled() ?? []), ...(this.#arriving ?? [])];
    this.#arriving = undefined;
    for (const msg of held) msg.nak();
  }

  async #check(): Promise<void> {
    this.#state = 'checking';
    try {
      if (this.#previous) {
        await this.#previous;
        this.#previous = undefined;
        if (this.#stopped) return;
      }
      do {
        this.#again = false;
        const found = await this.#ctx.limitChecks(() =>
          this.#stopped ? Promise.resolve(undefined) : this.#find(),
        );
        if (this.#stopped) return;
        if (found) {
          await this.#consume(found);
          return;
        }
      } while (this.#again && !this.#stopped);
      this.#state = 'idle';
    } catch (err) {
      this.#state = 'idle';
      if (this.#stopped) return;
      this.#ctx.logger.warn(
        { err: String(err), consumer: this.#name },
        'queue check failed: retrying',
      );
      clearTimeout(this.#retry);
      this.#retry = setTimeout(() => this.kick(), RETRY_MS);
      this.#retry.unref();
    }
  }

  #find(): Promise<FoundConsumer | undefined> {
    const { js, jsm, requester, logger, floors, options } = this.#ctx;
    const { account, recipient } = this.#target;
    return findQueueConsumer({
      js,
      jsm,
      requester,
      logger,
      floors,
      stream: this.#stream,
      account,
      recipient,
      ackWaitMs: options.ackWaitMs,
      maxAckPending: options.maxAckPending,
      memoryState: options.memoryState === true,
    });
  }

  async #consume(found: FoundConsumer): Promise<void> {
    const { consumer, ackPending } = found;
    this.#state = 'consuming';
    this.#consumer = consumer;
    if (ackPending > 0 && this.#ctx.options.ackWaitMs <= ORPHAN_WAIT_MAX_MS) {
      await this.#letOrphansExpire();
    }
    if (this.#stopped) return;
    this.#writer ??= new DrainWriter(this.#ctx, this.#target, this.#stream, this.#name);
    const writer = this.#writer;
    const { batch } = this.#ctx.options;
    const run = await consumer.consume({
      max_messages: batch,
      // nats.js tops the pull up once 3/4 of it is still to come (a pull request, and a write to
      // nats-server, per quarter batch); at half, each top-up asks for half a batch. Below 4 its
      // own rounding is kept, since a threshold of 0 would never top up.
      ...(batch >= 4 ? { threshold_messages: Math.floor(batch / 2) } : {}),
      callback: (msg) => this.#onMessage(msg),
    });
    if (this.#stopped) {
      // stop() ran while consume() was resolving: nothing was delivered yet (no I/O happened).
      run.stop();
      return;
    }
    this.#run = run;
    this.#ctx.metrics.activeDrainers.inc();
    writer.running(found, this.#ctx.options.ackWaitMs);
    void this.#watch(run);
  }

  /**
   * Deliveries another session holds unsettled may be orphans of an edge that died: JetStream
   * redelivers them once their ack_wait expires (a live edge keeps its own alive), and they go
   * first, ahead of newer events, only if they are due before this session's first pull (without
   * this wait, newer events overtook them). So the first pull waits one ack_wait plus a fifth, for
   * the server's redelivery timer to fire: in-order delivery at the cost of that wait, paid only
   * by a recipient whose consumer had deliveries in flight when the session started.
   */
  async #letOrphansExpire(): Promise<void> {
    const waitMs = Math.ceil(this.#ctx.options.ackWaitMs * 1.2);
    await new Promise<void>((resolve) => setTimeout(resolve, waitMs).unref());
  }

  /** Restarts consumption when it may have stalled, and goes idle when the consumer is gone. */
  async #watch(run: ConsumerMessages): Promise<void> {
    const trouble = await nextTrouble(run);
    if (!trouble || this.#run !== run) return;
    const { kind, status, data } = trouble;
    if (kind === 'gone') {
      this.#ctx.logger.info({ consumer: this.#name, status }, 'queue consumer gone: back to idle');
      this.#forget();
    } else {
      this.#ctx.logger.warn(
        { consumer: this.#name, status, data },
        'queue consumption stalled: restarting',
      );
      this.#restart();
    }
  }

  /** The consumer is gone: what was in flight can no longer be acked; check again. */
  #forget(): void {
    this.#writer?.forget();
    this.#restart();
  }

  /** Drops the current consume() and checks again: consumes anew, or goes idle if the consumer is gone. */
  #restart(): void {
    if (this.#stopped) return;
    this.#endRun();
    this.#state = 'idle';
    void this.#check();
  }

  #endRun(): void {
    this.#writer?.idle();
    const run = this.#run;
    if (!run) return;
    this.#run = undefined;
    this.#consumer = undefined;
    run.stop();
    this.#ctx.metrics.activeDrainers.dec();
  }

  async #verifyConsumer(): Promise<void> {
    const consumer = this.#consumer;
    if (this.#verifying || !consumer) return;
    this.#verifying = true;
    try {
      await consumer.info();
    } catch (err) {
      if (isNotFound(err) && this.#consumer === consumer) this.#forget();
    } finally {
      this.#verifying = false;
    }
  }

  #onMessage(msg: JsMsg): void {
    if (this.#arriving) this.#arriving.push(msg);
    // The writer exists from before consume() (the only source of messages); nak, never drop.
    else if (this.#writer) this.#writer.offer(msg);
    else msg.nak();
  }
}
