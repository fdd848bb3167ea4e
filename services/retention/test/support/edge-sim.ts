import { EventHeaders, subjects } from '@herald/proto';
import {
  type QueueConsumerOptions,
  queueConsumerConfig,
  queueConsumerName,
  queueStreamOf,
} from '@herald/queue';
import type {
  ConsumerConfig,
  ConsumerMessages,
  JetStreamManager,
  MsgRequest,
  NatsConnection,
  Subscription,
} from 'nats';

/**
 * An edge-equivalent drain of one recipient's queue, done the way socket-edge does it: while
 * "connected" it consumes the recipient's durable consumer and acks after each delivery; it
 * creates the consumer (queueConsumerConfig, DeliverAll) only when something is queued; when the
 * consumer is deleted under it (a reap) it goes back to waiting for an `rt.queued` notice. After a
 * disconnect it naks what still reaches it; what consume() had prefetched and drops on stop()
 * returns after the consumer's ack_wait. Used by tests to stand in for real sockets without
 * starting the whole stack.
 */
export class EdgeSim {
  /** Herald-Ids delivered (and acked), in delivery order. */
  readonly delivered: string[] = [];
  readonly #nc: NatsConnection;
  readonly #jsm: JetStreamManager;
  readonly #account: string;
  readonly #recipient: string;
  readonly #consumerOpts: QueueConsumerOptions;
  readonly #pullExpiresMs: number;
  #connected = false;
  #notices: Subscription | undefined;
  #messages: ConsumerMessages | undefined;
  #loop: Promise<void> | undefined;
  #kick: (() => void) | undefined;
  #waiters: { predicate: () => boolean; resolve: () => void }[] = [];

  /**
   * `pullExpiresMs`: how long each pull request lives (consume()'s `expires`, 30 s by default). A
   * disconnected edge's pull stays registered on the server until it expires, and retention does
   * not reap a consumer with a waiting pull.
   */
  constructor(
    nc: NatsConnection,
    jsm: JetStreamManager,
    account: string,
    recipient: string,
    opts: { consumer?: QueueConsumerOptions; pullExpiresMs?: number } = {},
  ) {
    // It acks each delivery on its own, so its consumer has explicit acks (as one made before
    // AckAll): an AckAll ack would cover an earlier delivery left unacked, which the edge's floor
    // (socket-edge queue/ack-floor.ts, tested there) never does; retention reads the ack floor alike.
    this.#consumerOpts = { ackPolicy: 'explicit', ...opts.consumer };
    this.#pullExpiresMs = opts.pullExpiresMs ?? 30_000;
    this.#nc = nc;
    this.#jsm = jsm;
    this.#account = account;
    this.#recipient = recipient;
  }

  /** The recipient's partition stream. */
  get #stream(): string {
    return queueStreamOf(this.#account, this.#recipient);
  }

  get name(): string {
    return queueConsumerName(this.#account, this.#recipient);
  }

  connect(): void {
    if (this.#connected) return;
    this.#connected = true;
    this.#notices = this.#nc.subscribe(subjects.queued(this.#account, this.#recipient), {
      callback: () => this.#kick?.(),
    });
    this.#loop = this.#run();
  }

  async disconnect(): Promise<void> {
    if (!this.#connected) return;
    this.#connected = false;
    this.#notices?.unsubscribe();
    this.#messages?.stop();
    this.#kick?.();
    await this.#loop;
  }

  /** Resolves once `count` events were delivered in total, or rejects after `timeoutMs`. */
  waitFor(count: number, timeoutMs = 10_000): Promise<void> {
    return this.until(() => this.delivered.length >= count, timeoutMs, `${count} deliveries`);
  }

  until(predicate: () => boolean, timeoutMs: number, what: string): Promise<void> {
    if (predicate()) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const timer = setTimeout(
        () =>
          reject(new Error(`timed out waiting for ${what}: delivered ${this.delivered.length}`)),
        timeoutMs,
      );
      this.#waiters.push({
        predicate,
        resolve: () => {
          clearTimeout(timer);
          resolve();
        },
      });
    });
  }

  async #run(): Promise<void> {
    while (this.#connected) {
      const woken = new Promise<void>((resolve) => {
        this.#kick = resolve;
      });
      if (await this.#ensureConsumer()) await this.#consume();
      if (!this.#connected) break;
      // Nothing queued, or the consumer was deleted: wait for a notice (rt.queued), with a slow
      // re-check as the edge's safety net.
      await Promise.race([woken, new Promise((r) => setTimeout(r, 1000))]);
    }
  }

  /** True when a consumer exists, or something is queued and one was created. */
  async #ensureConsumer(): Promise<boolean> {
    try {
      await this.#jsm.consumers.info(this.#stream, this.name);
      return true;
    } catch {
      // Not there: create it only if something is queued.
    }
    const query = {
      next_by_subj: subjects.queue(this.#account, this.#recipient),
      seq: 0,
    } as unknown as MsgRequest;
    const queued = await this.#jsm.streams.getMessage(this.#stream, query).then(
      () => true,
      () => false,
    );
    if (!queued) return false;
    const config = queueConsumerConfig(this.#account, this.#recipient, this.#consumerOpts);
    await this.#jsm.consumers.add(this.#stream, config as unknown as ConsumerConfig);
    return true;
  }

  async #consume(): Promise<void> {
    let messages: ConsumerMessages;
    try {
      const consumer = await this.#nc.jetstream().consumers.get(this.#stream, this.name);
      messages = await consumer.consume({
        max_messages: 8,
        expires: this.#pullExpiresMs,
        abort_on_missing_resource: true,
      });
    } catch {
      return;
    }
    this.#messages = messages;
    void (async () => {
      for await (const s of await messages.status()) {
        if (s.type === 'consumer_deleted' || s.type === 'consumer_not_found') messages.stop();
      }
    })().catch(() => undefined);
    try {
      for await (const m of messages) {
        if (!this.#connected) {
          m.nak();
          continue;
        }
        const id = m.headers?.get(EventHeaders.id) ?? `seq:${m.seq}`;
        // Delivered = acked and confirmed: what the edge does after the socket write / client ack.
        if (await m.ackAck().catch(() => false)) {
          this.delivered.push(id);
          this.#notify();
        }
      }
    } catch {
      // Consumer deleted under us (a reap): back to "create when something is queued".
    }
    this.#messages = undefined;
  }

  #notify(): void {
    this.#waiters = this.#waiters.filter((w) => {
      if (!w.predicate()) return true;
      w.resolve();
      return false;
    });
  }
}
