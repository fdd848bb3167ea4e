import type { Logger } from '@herald/kit';
import { isNotFound, type NatsRequester } from '@herald/nats';
import { type QueueFloors, type QueueLayout, queueConsumerName } from '@herald/queue';
import type { StatusBatcher } from '@herald/status-client';
import type {
  Consumer,
  ConsumerMessages,
  JetStreamClient,
  JetStreamManager,
  JsMsg,
  NatsConnection,
} from 'nats';
import type { EdgeMetrics } from '../metrics.js';
import type { EdgeSocket } from '../socket/edge-socket.js';
import { nextTrouble } from './consumption-trouble.js';
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
export interface QueueDrainerOptions {
  /** max_messages of consume(). */
  batch: number;
  /** ack_wait of the recipient's consumer, ms. */
  ackWaitMs: number;
  /** max_ack_pending of a consumer this edge creates. */
  maxAckPending: number;
  /** Whether a consumer this edge creates keeps its state in memory (QUEUE_CONSUMER_MEMORY). */
  memoryState?: boolean;
}

export interface QueueDrainerDeps {
  nc: NatsConnection;
  js: JetStreamClient;
  jsm: Promise<JetStreamManager>;
  /** Request/reply without nats.js's Error objects, for the connect-time lookup. */
  requester: NatsRequester;
  /** Which partition stream holds the recipient's queue. */
  layout: QueueLayout;
  account: string;
  recipient: string;
  options: QueueDrainerOptions;
  /** The recipient's sockets on this edge, read at each message. */
  sockets: () => Iterable<EdgeSocket>;
  metrics: EdgeMetrics;
  logger: Logger;
  /** Recorded ack floors, for consumers whose state is in nats-server's memory (ack-floors.ts). */
  floors?: QueueFloors;
  /** The edge's one status batcher: each acked event is a `delivered` record. */
  statusBatcher: Pick<StatusBatcher, 'add'>;
  /** Runs a queue check when one of the edge's QUEUE_CHECK_CONCURRENCY slots is free. */
  limitChecks: <T>(check: () => Promise<T>) => Promise<T>;
  /**
   * The close of the recipient's previous session on this edge, when still running: the first
   * check waits for it, so what that session nakked is redelivered before anything newer.
   */
  previous?: Promise<void>;
}

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
  readonly #deps: QueueDrainerDeps;
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

  constructor(deps: QueueDrainerDeps) {
    this.#deps = deps;
    this.#previous = deps.previous;
    this.#stream = deps.layout.streamOf(deps.account, deps.recipient);
  }

  /** The recipient's durable consumer (derived when needed rather than kept per session). */
  get #name(): string {
    return queueConsumerName(this.#deps.account, this.#deps.recipient);
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
   * it could only offer to such a request waited for ack_wait (measured on 2.9.10).
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
      await drainSubscription(run, this.#deps.nc);
      this.#endRun();
      const jsm = await this.#deps.jsm;
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
        const found = await this.#deps.limitChecks(() =>
          this.#stopped
            ? Promise.resolve(undefined)
            : findQueueConsumer({
                ...this.#deps,
                stream: this.#stream,
                ackWaitMs: this.#deps.options.ackWaitMs,
                maxAckPending: this.#deps.options.maxAckPending,
                memoryState: this.#deps.options.memoryState === true,
              }),
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
      this.#deps.logger.warn(
        { err: String(err), consumer: this.#name },
        'queue check failed: retrying',
      );
      clearTimeout(this.#retry);
      this.#retry = setTimeout(() => this.kick(), RETRY_MS);
      this.#retry.unref();
    }
  }

  async #consume({ consumer, ackPending, memoryState }: FoundConsumer): Promise<void> {
    this.#state = 'consuming';
    this.#consumer = consumer;
    if (ackPending > 0 && this.#deps.options.ackWaitMs <= ORPHAN_WAIT_MAX_MS) {
      await this.#letOrphansExpire();
    }
    if (this.#stopped) return;
    this.#writer ??= new DrainWriter(this.#deps, this.#stream, this.#name);
    const writer = this.#writer;
    const { batch } = this.#deps.options;
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
    this.#deps.metrics.activeDrainers.inc();
    writer.running(memoryState, this.#deps.options.ackWaitMs);
    void this.#watch(run);
  }

  /**
   * Deliveries another session holds unsettled may be orphans of an edge that died: JetStream
   * redelivers them once their ack_wait expires (a live edge keeps its own alive), and they go
   * first, ahead of newer events, only if they are due before this session's first pull (measured:
   * without this wait, newer events overtook them). So the first pull waits one ack_wait plus a
   * fifth, for the server's redelivery timer to fire: in-order delivery at a cost of ~1.2 s, paid
   * only by a recipient whose consumer had deliveries in flight when the session started.
   */
  async #letOrphansExpire(): Promise<void> {
    const waitMs = Math.ceil(this.#deps.options.ackWaitMs * 1.2);
    await new Promise<void>((resolve) => setTimeout(resolve, waitMs).unref());
  }

  /** Restarts consumption when it may have stalled, and goes idle when the consumer is gone. */
  async #watch(run: ConsumerMessages): Promise<void> {
    const trouble = await nextTrouble(run);
    if (!trouble || this.#run !== run) return;
    const { kind, status, data } = trouble;
    if (kind === 'gone') {
      this.#deps.logger.info({ consumer: this.#name, status }, 'queue consumer gone: back to idle');
      this.#forget();
    } else {
      this.#deps.logger.warn(
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
    this.#deps.metrics.activeDrainers.dec();
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
