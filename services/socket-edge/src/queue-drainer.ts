import { type Logger, type NatsRequester, replyJson } from '@herald/kit';
import { QUEUE_STREAM, queueConsumerConfig, queueConsumerName, subjects } from '@herald/proto';
import {
  type Consumer,
  type ConsumerConfig,
  ConsumerDebugEvents,
  ConsumerEvents,
  type ConsumerMessages,
  type JetStreamClient,
  type JetStreamManager,
  type JsMsg,
  type NatsConnection,
} from 'nats';
import { type EdgeEvent, edgeEventOf } from './edge-event.js';
import type { EdgeSocket } from './edge-socket.js';
import { EventFrames } from './framing.js';
import { isNotFound } from './jetstream-errors.js';
import type { EdgeMetrics } from './metrics.js';

/** How long a JetStream API call may take (nats.js's own default), ms. */
const JS_API_TIMEOUT_MS = 5000;
/** Delay before retrying a queue check that failed (JetStream unreachable), ms. */
const RETRY_MS = 2000;
/** While deliveries wait for socket room: how often room is looked for besides write completions, ms. */
const PACE_POLL_MS = 50;

export interface QueueDrainerOptions {
  /** max_messages of consume(). */
  batch: number;
  /** ack_wait of a consumer this edge creates, ms. */
  ackWaitMs: number;
  /** max_ack_pending of a consumer this edge creates. */
  maxAckPending: number;
}

export interface QueueDrainerDeps {
  nc: NatsConnection;
  js: JetStreamClient;
  jsm: Promise<JetStreamManager>;
  /** Request/reply without nats.js's Error objects, for the connect-time lookup. */
  requester: NatsRequester;
  account: string;
  recipient: string;
  options: QueueDrainerOptions;
  /** The recipient's sockets on this edge, read at each message. */
  sockets: () => Iterable<EdgeSocket>;
  metrics: EdgeMetrics;
  logger: Logger;
  /** Runs a queue check when one of the edge's QUEUE_CHECK_CONCURRENCY slots is free. */
  limitChecks: <T>(check: () => Promise<T>) => Promise<T>;
}

/** One queued event handed to sockets and not yet acked or nakked. */
interface InFlight {
  /** Deliveries carrying this id, by stream sequence (a redelivery replaces its predecessor). */
  msgs: Map<number, JsMsg>;
  /** Writes handed to sockets whose completion is not known yet. */
  writing: number;
  /** herald.v1 sockets the event was written to, whose ack would settle it. */
  awaiting: Set<EdgeSocket>;
}

type State = 'idle' | 'checking' | 'consuming';

/**
 * Drains one recipient's offline queue into that recipient's sockets on this edge.
 *
 * The recipient's durable consumer exists only while something is queued for them, so the
 * drainer starts idle and checks the queue when told to ({@link kick}: on session start, on every
 * QueuedNotice, once more shortly after the start). When the consumer exists, or the stream holds
 * a message on the recipient's subject (the consumer is then created), it consumes with a small
 * batch. A queued event is acked once a plain socket's write completed or a herald.v1 client acked
 * its id, and nakked when no socket could take it. {@link stop} nakks everything delivered to this
 * edge and not acked, so it comes again at once on the next connect rather than after ack_wait.
 */
export class QueueDrainer {
  readonly #deps: QueueDrainerDeps;
  readonly #name: string;
  readonly #subject: string;
  readonly #inFlight = new Map<string, InFlight>();
  #state: State = 'idle';
  #stopped = false;
  /** A kick arrived while a check was running: check again when it ends. */
  #again = false;
  #verifying = false;
  #consumer: Consumer | undefined;
  #run: ConsumerMessages | undefined;
  /** While stopping: deliveries that arrive are kept here, unwritten, and nakked. */
  #held: JsMsg[] | undefined;
  /**
   * Deliveries waiting for room in a socket's send buffer, in stream order (a reader slower than
   * the drain). Bounded by the consumer's max_ack_pending.
   */
  #paced: JsMsg[] = [];
  #paceTimer: NodeJS.Timeout | undefined;
  /** When the paced deliveries last told JetStream they are still being worked on. */
  #pacedTouchedAt = 0;
  #retry: NodeJS.Timeout | undefined;

  constructor(deps: QueueDrainerDeps) {
    this.#deps = deps;
    this.#name = queueConsumerName(deps.account, deps.recipient);
    this.#subject = subjects.queue(deps.account, deps.recipient);
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

  /** A herald.v1 client acked this id: ack it in JetStream if it is a queued event in flight. */
  clientAck(id: string): void {
    this.#settle(id, 'ack');
  }

  /** A socket left the session: an event only it was expected to ack is nakked for redelivery. */
  socketGone(socket: EdgeSocket): void {
    for (const [id, entry] of this.#inFlight) {
      if (entry.awaiting.delete(socket) && entry.writing === 0 && entry.awaiting.size === 0) {
        this.#settle(id, 'nak');
      }
    }
  }

  /**
   * Stops consuming and nakks every delivery not acked, so it comes again at once on the next
   * connect instead of after ack_wait.
   *
   * The order matters. The run's subscription is drained rather than dropped: the unsubscribe and
   * a flush go out together, and everything the server sent before it saw the unsubscribe (consume()
   * prefetches, and a backlog may be streaming) still reaches the callback, which holds it instead
   * of writing it. No nak is sent until then. After the unsubscribe the server still lists the
   * run's pull requests until something makes it check their interest, and nats-server 2.9.10
   * mishandles a redelivery it can only offer to such stale requests (measured: the nakked event
   * waits for ack_wait and another one is delivered twice). A consumer info request makes the server
   * drop them (it reports num_waiting after checking interest), so the naks come after it.
   */
  async stop(): Promise<void> {
    if (this.#stopped) return;
    this.#stopped = true;
    clearTimeout(this.#retry);
    const run = this.#run;
    if (run) {
      this.#held = [];
      await drainSubscription(run, this.#deps.nc);
      this.#endRun();
      const jsm = await this.#deps.jsm;
      await jsm.consumers.info(QUEUE_STREAM, this.#name).catch(() => undefined);
    }
    const held = [...this.#paced, ...(this.#held ?? [])];
    this.#dropPaced();
    this.#held = undefined;
    for (const id of [...this.#inFlight.keys()]) this.#settle(id, 'nak');
    for (const msg of held) msg.nak();
  }

  async #check(): Promise<void> {
    this.#state = 'checking';
    try {
      do {
        this.#again = false;
        const consumer = await this.#deps.limitChecks(() =>
          this.#stopped ? Promise.resolve(undefined) : this.#findConsumer(),
        );
        if (this.#stopped) return;
        if (consumer) {
          await this.#consume(consumer);
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

  /**
   * The recipient's consumer, creating it when the stream holds something for them; undefined when
   * nothing is stored for them (no consumer is needed or created then).
   *
   * The stream is asked first: most connects are of recipients with nothing stored, and for them
   * that one call settles it (a consumer left over with everything acked and deleted has nothing to
   * deliver; an event stored after this call comes with a QueuedNotice, which checks again).
   */
  async #findConsumer(): Promise<Consumer | undefined> {
    const { js, options } = this.#deps;
    if (!(await storesAnythingFor(this.#deps.requester, this.#subject))) return undefined;
    const jsm = await this.#deps.jsm;
    try {
      return await js.consumers.get(QUEUE_STREAM, this.#name);
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
    const config = queueConsumerConfig(this.#deps.account, this.#deps.recipient, {
      ackWaitMs: options.ackWaitMs,
      maxAckPending: options.maxAckPending,
    });
    try {
      // proto spells the config in JetStream's wire strings; nats.js types the same strings as enums.
      await jsm.consumers.add(QUEUE_STREAM, config as unknown as Partial<ConsumerConfig>);
    } catch (err) {
      // Several edges may race to create it; on servers that refuse a differing config, another
      // edge's consumer is as good as ours.
      this.#deps.logger.debug(
        { err: String(err), consumer: this.#name },
        'consumer add refused: using the existing one',
      );
    }
    return await js.consumers.get(QUEUE_STREAM, this.#name);
  }

  async #consume(consumer: Consumer): Promise<void> {
    this.#state = 'consuming';
    this.#consumer = consumer;
    const run = await consumer.consume({
      max_messages: this.#deps.options.batch,
      callback: (msg) => this.#onMessage(msg),
    });
    if (this.#stopped) {
      // stop() ran while consume() was resolving: nothing was delivered yet (no I/O happened).
      run.stop();
      return;
    }
    this.#run = run;
    this.#deps.metrics.activeDrainers.inc();
    void this.#watch(run);
  }

  /** Restarts consumption when it may have stalled, and goes idle when the consumer is gone. */
  async #watch(run: ConsumerMessages): Promise<void> {
    for await (const status of await run.status()) {
      if (this.#run !== run) return;
      const data = String(status.data);
      if (
        status.type === ConsumerEvents.ConsumerDeleted ||
        status.type === ConsumerEvents.ConsumerNotFound
      ) {
        this.#deps.logger.info(
          { consumer: this.#name, status: status.type },
          'queue consumer gone: back to idle',
        );
        this.#inFlight.clear();
        this.#dropPaced();
        this.#restart();
        return;
      }
      const leadership =
        status.type === ConsumerDebugEvents.DebugEvent && /^409\b.*leadership/i.test(data);
      if (status.type === ConsumerEvents.HeartbeatsMissed || leadership) {
        // After a consumer-leader failover consume() stalls until heartbeats are missed; a fresh
        // consume() asks the new leader.
        this.#deps.logger.warn(
          { consumer: this.#name, status: status.type, data },
          'queue consumption stalled: restarting',
        );
        this.#restart();
        return;
      }
    }
  }

  /** Drops the current consume() and checks again: consumes anew, or goes idle if the consumer is gone. */
  #restart(): void {
    if (this.#stopped) return;
    this.#endRun();
    this.#state = 'idle';
    void this.#check();
  }

  #endRun(): void {
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
      if (isNotFound(err) && this.#consumer === consumer) {
        this.#inFlight.clear();
        this.#dropPaced();
        this.#restart();
      }
    } finally {
      this.#verifying = false;
    }
  }

  #onMessage(msg: JsMsg): void {
    if (this.#held) {
      this.#held.push(msg);
      return;
    }
    if (this.#paced.length > 0 || !this.#hasRoomFor(msg)) {
      this.#paced.push(msg);
      this.#armPace();
      return;
    }
    this.#write(msg);
  }

  #hasRoomFor(msg: JsMsg): boolean {
    for (const socket of this.#deps.sockets())
      if (!socket.hasRoomFor(msg.data.length)) return false;
    return true;
  }

  /** Writes the paced deliveries that now fit, in order; keeps looking while some remain. */
  #pump(): void {
    while (this.#paced.length > 0 && !this.#held) {
      const next = this.#paced[0] as JsMsg;
      if (!this.#hasRoomFor(next)) break;
      this.#paced.shift();
      this.#write(next);
    }
    if (this.#paced.length === 0) {
      clearTimeout(this.#paceTimer);
      this.#paceTimer = undefined;
      return;
    }
    // Waiting longer than ack_wait would have JetStream redeliver them: say they are in progress.
    const now = Date.now();
    if (now - this.#pacedTouchedAt > this.#deps.options.ackWaitMs / 3) {
      this.#pacedTouchedAt = now;
      for (const msg of this.#paced) msg.working();
    }
    this.#armPace();
  }

  #armPace(): void {
    if (this.#paceTimer || this.#stopped) return;
    if (this.#pacedTouchedAt === 0) this.#pacedTouchedAt = Date.now();
    this.#paceTimer = setTimeout(() => {
      this.#paceTimer = undefined;
      this.#pump();
    }, PACE_POLL_MS);
    this.#paceTimer.unref();
  }

  #dropPaced(): void {
    this.#paced = [];
    this.#pacedTouchedAt = 0;
    clearTimeout(this.#paceTimer);
    this.#paceTimer = undefined;
  }

  #write(msg: JsMsg): void {
    const event: EdgeEvent = edgeEventOf(msg.headers, msg.data, () => ({
      id: `seq-${msg.seq}`,
      ts: Math.floor(msg.info.timestampNanos / 1_000_000),
    }));
    let entry = this.#inFlight.get(event.id);
    if (!entry) {
      entry = { msgs: new Map(), writing: 0, awaiting: new Set() };
      this.#inFlight.set(event.id, entry);
    }
    entry.msgs.set(msg.seq, msg);
    const current = entry;
    const frames = new EventFrames(event);
    for (const socket of this.#deps.sockets()) {
      const handed = socket.write(frames, (ok) => {
        current.writing--;
        if (this.#paced.length > 0) this.#pump();
        if (this.#inFlight.get(event.id) !== current) return;
        if (ok && socket.framing === 'plain') {
          this.#settle(event.id, 'ack');
          return;
        }
        if (ok && socket.open) current.awaiting.add(socket);
        if (current.writing === 0 && current.awaiting.size === 0) this.#settle(event.id, 'nak');
      });
      if (handed) current.writing++;
    }
    if (current.writing === 0 && current.awaiting.size === 0) this.#settle(event.id, 'nak');
  }

  #settle(id: string, how: 'ack' | 'nak'): void {
    const entry = this.#inFlight.get(id);
    if (!entry) return;
    this.#inFlight.delete(id);
    if (how === 'nak' && this.#held) {
      // Stopping: a nak now could reach the server between the unsubscribe and the cleanup of the
      // run's pull requests (see stop()); stop() nakks it with the rest.
      this.#held.push(...entry.msgs.values());
      return;
    }
    for (const msg of entry.msgs.values()) {
      if (how === 'ack') msg.ack();
      else msg.nak();
    }
    if (how === 'ack') this.#deps.metrics.queuedDeliveries.inc();
  }
}

/**
 * Unsubscribes a consume() run so that nothing the server already sent is lost: nats.js keeps the
 * subscription of a run on its `sub` field (not part of the ConsumerMessages interface), and
 * draining it delivers every message that arrives before the server confirms the unsubscribe.
 * Falls back to a flush and a stop if that field is ever missing.
 */
async function drainSubscription(run: ConsumerMessages, nc: NatsConnection): Promise<void> {
  const sub = (run as { sub?: { drain?: () => Promise<void> } }).sub;
  if (typeof sub?.drain === 'function') {
    await sub.drain().catch(() => undefined);
    return;
  }
  await nc.flush().catch(() => undefined);
}

/**
 * Whether the queue stream holds any message on `subject`: JetStream's `STREAM.MSG.GET` with
 * `last_by_subj`, sent over the NatsRequester because its usual answer on connect, 404 "no message
 * found", costs a NatsError with a captured stack through nats.js (8 % of the edge's CPU per
 * connect in the figure 6 profile). Throws when JetStream does not answer.
 */
async function storesAnythingFor(requester: NatsRequester, subject: string): Promise<boolean> {
  const outcome = await requester.request(
    `$JS.API.STREAM.MSG.GET.${QUEUE_STREAM}`,
    new TextEncoder().encode(JSON.stringify({ last_by_subj: subject })),
    undefined,
    JS_API_TIMEOUT_MS,
  );
  if (outcome.kind !== 'reply') {
    throw new Error(
      `JetStream message lookup: ${outcome.kind === 'error' ? outcome.reason : outcome.kind}`,
    );
  }
  const body = replyJson(outcome.msg) as
    | { message?: unknown; error?: { code?: number; description?: string } }
    | undefined;
  if (body?.message) return true;
  if (body?.error?.code === 404) return false;
  throw new Error(`JetStream message lookup: ${body?.error?.description ?? 'malformed reply'}`);
}
