import type { Publisher, TurnPublishOptions } from '@herald/nats';
import { createInbox, type Msg, type NatsConnection, type NatsError } from 'nats';

/** Bounds of the status messages held until the status stream acknowledges them. */
export interface StatusAckOptions {
  /**
   * How long a message waits for the stream's PubAck before it is published again, ms; each
   * further attempt waits twice as long, up to {@link MAX_BACKOFF_FACTOR} times this.
   */
  ackTimeoutMs: number;
  /**
   * Most payload bytes held unacknowledged: past it the oldest held messages are dropped (the
   * newest is always kept, even alone over the bound).
   */
  maxPendingBytes: number;
  logger?: { warn(obj: object, msg: string): void; info(obj: object, msg: string): void };
  /** Hears every message dropped over the bound (a counter). */
  onDropped?: (messages: number) => void;
  /** Hears every message published again (a counter). */
  onRepublished?: (messages: number) => void;
}

/** Two seconds for an ack; 16 MiB held unacknowledged. */
export const DEFAULT_STATUS_ACK_OPTIONS = {
  ackTimeoutMs: 2000,
  maxPendingBytes: 16 * 1024 * 1024,
} as const satisfies StatusAckOptions;

/** A message's retries wait at most this many ack timeouts. */
export const MAX_BACKOFF_FACTOR = 8;
/** Drops over the bound are logged at most this often (a count, never the records), ms. */
const DROP_LOG_INTERVAL_MS = 10_000;

/** One message published with a reply subject, held from its build until its PubAck. */
export class StatusTicket {
  readonly token: number;
  readonly options: TurnPublishOptions;
  subject = '';
  payload: string | Uint8Array = '';
  bytes = 0;
  /** When it is published again unless acknowledged first (epoch ms). */
  dueAt = 0;
  attempts = 0;

  constructor(token: number, reply: string) {
    this.token = token;
    this.options = { reply };
  }
}

/**
 * Holds the status messages a process publishes until JetStream's status stream acknowledges
 * them, and publishes again (the same bytes, through the same turn publisher) what it has not:
 * no answer within the ack timeout, an error answer (`{"error":…}`: no quorum, no leader) or
 * nats-server's 503 no-responders (no stream listens yet). Every message carries a reply subject
 * `<inbox>.<token>` on one subscription of the process's own inbox (`_INBOX.>`, which the
 * services' NATS users may read); only a PubAck (`{"stream":…,"seq":…}`) releases it.
 *
 * Duplicates are harmless: a message published again after its first copy was stored (an ack
 * slower than the timeout, an ack lost in a reconnect) is a second copy of the same records, and
 * the status writer keeps an event's first transition of each kind (one outbox message per
 * endpoint and msg_id), so a repeated record changes nothing and sends no second webhook.
 *
 * Bounded: at most `maxPendingBytes` are held; the oldest are dropped past it (counted, logged
 * once per {@link DROP_LOG_INTERVAL_MS}). One interval timer per process, no timer per message;
 * while the connection is down nothing is re-published (nats.js would only buffer copies), and at
 * its reconnect everything held goes again at once.
 */
export class StatusAcks {
  readonly #publisher: Publisher;
  readonly #opts: StatusAckOptions;
  readonly #prefix: string;
  readonly #sub: { unsubscribe(): void };
  /** In publish order (a Map keeps insertion order): the first is the oldest. */
  readonly #held = new Map<number, StatusTicket>();
  readonly #timer: NodeJS.Timeout;
  #next = 0;
  #bytes = 0;
  #dropped = 0;
  #droppedUnlogged = 0;
  #lastDropLog = 0;
  #connected = true;
  #onIdle: (() => void) | undefined;

  constructor(
    nc: Pick<NatsConnection, 'subscribe' | 'status'>,
    publisher: Publisher,
    opts: StatusAckOptions,
  ) {
    if (!Number.isInteger(opts.ackTimeoutMs) || opts.ackTimeoutMs < 1) {
      throw new RangeError('ackTimeoutMs must be a positive integer');
    }
    if (!Number.isInteger(opts.maxPendingBytes) || opts.maxPendingBytes < 1) {
      throw new RangeError('maxPendingBytes must be a positive integer');
    }
    this.#publisher = publisher;
    this.#opts = opts;
    this.#prefix = `${createInbox()}.`;
    this.#sub = nc.subscribe(`${this.#prefix}*`, { callback: this.#onReply });
    this.#timer = setInterval(this.#tick, Math.min(1000, Math.max(10, opts.ackTimeoutMs >> 1)));
    this.#timer.unref();
    // The iteration ends when the connection closes.
    void (async () => {
      for await (const s of nc.status()) {
        if (s.type === 'disconnect') this.#connected = false;
        else if (s.type === 'reconnect') this.#reconnected();
      }
    })();
  }

  /** Messages held unacknowledged. */
  get pending(): number {
    return this.#held.size;
  }

  /** Payload bytes held unacknowledged. */
  get pendingBytes(): number {
    return this.#bytes;
  }

  /** Messages dropped over the bound since the start. */
  get dropped(): number {
    return this.#dropped;
  }

  /** The ticket of the next message: publish it with `ticket.options`, then {@link hold} it. */
  ticket(): StatusTicket {
    const token = this.#next++;
    return new StatusTicket(token, this.#prefix + token);
  }

  /** Holds a message just handed to the publisher until its PubAck. */
  hold(ticket: StatusTicket, subject: string, payload: string | Uint8Array): void {
    ticket.subject = subject;
    ticket.payload = payload;
    ticket.bytes = typeof payload === 'string' ? Buffer.byteLength(payload) : payload.length;
    ticket.dueAt = Date.now() + this.#opts.ackTimeoutMs;
    this.#held.set(ticket.token, ticket);
    this.#bytes += ticket.bytes;
    while (this.#bytes > this.#opts.maxPendingBytes && this.#held.size > 1) {
      const oldest = this.#held.values().next().value as StatusTicket;
      this.#release(oldest);
      this.#dropped++;
      this.#droppedUnlogged++;
      this.#opts.onDropped?.(1);
    }
  }

  /**
   * Stops retrying: waits up to `waitMs` for the held messages' acks, publishing those still
   * held at half of it once more, then stops listening. Returns (and logs) how many were left
   * unacknowledged: their records are lost.
   */
  async stop(waitMs: number): Promise<number> {
    clearInterval(this.#timer);
    // The last turn's messages are built (and held) when the turn publisher's flush runs.
    await new Promise((r) => setImmediate(r));
    await this.#idle(waitMs / 2);
    if (this.#held.size > 0) {
      for (const t of this.#held.values()) this.#publisher.publish(t.subject, t.payload, t.options);
      this.#opts.onRepublished?.(this.#held.size);
      await this.#idle(waitMs / 2);
    }
    this.#sub.unsubscribe();
    const left = this.#held.size;
    const fields = { unacknowledged: left, dropped: this.#dropped };
    if (left > 0) {
      this.#opts.logger?.warn(fields, 'status messages left unacknowledged at shutdown: lost');
    } else this.#opts.logger?.info(fields, 'status messages all acknowledged at shutdown');
    return left;
  }

  #idle(ms: number): Promise<void> {
    if (this.#held.size === 0) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      function done() {
        clearTimeout(timer);
        resolve();
      }
      this.#onIdle = done;
    });
  }

  #release(ticket: StatusTicket): void {
    this.#held.delete(ticket.token);
    this.#bytes -= ticket.bytes;
    if (this.#held.size === 0) {
      this.#onIdle?.();
      this.#onIdle = undefined;
    }
  }

  readonly #onReply = (err: NatsError | null, msg: Msg): void => {
    if (err) return;
    const ticket = this.#held.get(Number(msg.subject.slice(this.#prefix.length)));
    // Acked already (a second copy's answer), or dropped.
    if (ticket === undefined) return;
    // No responders is an empty 503 status message; an error answer names no seq. Either waits
    // for the ticket's next attempt.
    if (msg.data.length === 0 || !isPubAck(msg.data)) return;
    this.#release(ticket);
  };

  readonly #tick = (): void => {
    const now = Date.now();
    if (this.#connected) {
      let republished = 0;
      for (const t of this.#held.values()) {
        if (t.dueAt > now) continue;
        t.attempts++;
        t.dueAt = now + this.#delay(t.attempts);
        this.#publisher.publish(t.subject, t.payload, t.options);
        republished++;
      }
      if (republished > 0) this.#opts.onRepublished?.(republished);
    }
    if (this.#droppedUnlogged > 0 && now - this.#lastDropLog >= DROP_LOG_INTERVAL_MS) {
      this.#opts.logger?.warn(
        { dropped: this.#droppedUnlogged, pending: this.#held.size, pendingBytes: this.#bytes },
        'status messages dropped unacknowledged: held bytes over STATUS_PENDING_MAX_BYTES',
      );
      this.#droppedUnlogged = 0;
      this.#lastDropLog = now;
    }
  };

  /** Back on a server: everything held goes again at the next tick, its backoff reset. */
  #reconnected(): void {
    this.#connected = true;
    for (const t of this.#held.values()) {
      t.attempts = 0;
      t.dueAt = 0;
    }
  }

  #delay(attempts: number): number {
    return this.#opts.ackTimeoutMs * Math.min(2 ** attempts, MAX_BACKOFF_FACTOR);
  }
}

const decoder = new TextDecoder();

/** A JetStream PubAck (`{"stream":…,"seq":…}`), not an error answer (`{"error":…}`). */
function isPubAck(data: Uint8Array): boolean {
  try {
    const body = JSON.parse(decoder.decode(data)) as { seq?: unknown; error?: unknown };
    return body.error === undefined && typeof body.seq === 'number';
  } catch {
    return false;
  }
}
