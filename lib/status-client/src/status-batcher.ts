import type { TurnPublisher } from '@herald/nats';
import { STATUS_BATCH_RECORDS_MAX, type StatusEvent, subjects } from '@herald/proto';
import type { StatusAcks } from './status-acks.js';

/** Bounds of one status batch message. */
export interface StatusBatchLimits {
  /** Most records in one message, 1..STATUS_BATCH_RECORDS_MAX. */
  maxRecords: number;
  /**
   * Most bytes of one message's payload. A single record larger than this still leaves, alone in
   * its message (records are small: ids, an account, a key, a recipient, a time).
   */
  maxBytes: number;
}

/** 256 records or 64 KiB, whichever comes first: far below NATS's default 1 MiB max_payload. */
export const DEFAULT_STATUS_BATCH_LIMITS: StatusBatchLimits = {
  maxRecords: 256,
  maxBytes: 65_536,
};

const OPEN = '{"v":1,"records":[';
const CLOSE = ']}';
const ENVELOPE_BYTES = OPEN.length + CLOSE.length;

interface Open {
  parts: string[];
  /** Payload bytes of the message as it stands, envelope included. */
  bytes: number;
}

/**
 * Coalesces the status records a process produces in one event-loop turn into one `StatusBatch`
 * message per account (proto/status.ts) on `subjects.status(account)`: one NATS message, one
 * stream store and one writer ack for a turn's records instead of one each. The message takes its
 * place in the turn publisher's order with the account's first record of the turn and is built
 * when the turn's messages leave (`TurnPublisher.publishBuilt`), so it shares their socket write.
 * A message holds at most `maxRecords` records and `maxBytes` bytes; a record that would cross
 * either bound closes the message in hand and opens the next.
 *
 * Nothing here can fail a dispatch or a delivery, and a record waits at most one turn, which on
 * an idle process is at once. With `acks` ({@link StatusAcks}) every message carries a reply
 * subject and is held until the status stream acknowledges it, published again until then
 * (bounded); without, fire-and-forget.
 */
export class StatusBatcher {
  readonly #publisher: TurnPublisher;
  readonly #limits: StatusBatchLimits;
  /** The message of this turn still taking records, per account. */
  readonly #open = new Map<string, Open>();
  readonly #acks: StatusAcks | undefined;

  constructor(
    publisher: TurnPublisher,
    limits: StatusBatchLimits = DEFAULT_STATUS_BATCH_LIMITS,
    acks?: StatusAcks,
  ) {
    if (
      !Number.isInteger(limits.maxRecords) ||
      limits.maxRecords < 1 ||
      limits.maxRecords > STATUS_BATCH_RECORDS_MAX
    ) {
      throw new RangeError(`maxRecords must be an integer 1..${STATUS_BATCH_RECORDS_MAX}`);
    }
    if (!Number.isInteger(limits.maxBytes) || limits.maxBytes < 1) {
      throw new RangeError('maxBytes must be a positive integer');
    }
    this.#publisher = publisher;
    this.#limits = limits;
    this.#acks = acks;
  }

  /** Adds a record to this turn's message for its account. */
  add(record: StatusEvent): void {
    this.addJson(record.account_id, JSON.stringify(record));
  }

  /**
   * Records that the event `id` reached `recipient`: a socket proved receipt (the socket edge's
   * acked queued events and its catch-up writes). The status keeps the first such record. `device`:
   * the proving socket's connect named one (its webhook body says which device got it).
   */
  delivered(account: string, recipient: string, id: string, device?: string): void {
    const at = Date.now();
    this.add(
      device === undefined
        ? { v: 1, id, account_id: account, recipient, status: 'delivered', at }
        : { v: 1, id, account_id: account, recipient, status: 'delivered', at, device },
    );
  }

  /**
   * Publishes a record in a message of its own, in the turn's order, leaving the account's batch
   * open: a record that carries a payload (`payload_json`, a key's webhook opt-in) would crowd a
   * batch of small records past its bounds. The writer reads the single-record form.
   */
  addAlone(account: string, json: string): void {
    let subject: string;
    try {
      subject = subjects.status(account);
    } catch {
      return;
    }
    const acks = this.#acks;
    if (acks === undefined) {
      this.#publisher.publish(subject, json);
      return;
    }
    const ticket = acks.ticket();
    this.#publisher.publish(subject, json, ticket.options);
    acks.hold(ticket, subject, json);
  }

  /**
   * Adds a record its producer already wrote as JSON (a {@link StatusEvent} of `account`), for a
   * producer that writes its records' JSON faster than `JSON.stringify` of an object does.
   */
  addJson(account: string, json: string): void {
    const size = Buffer.byteLength(json);
    const open = this.#open.get(account);
    if (
      open &&
      open.parts.length < this.#limits.maxRecords &&
      open.bytes + 1 + size <= this.#limits.maxBytes
    ) {
      open.parts.push(json);
      open.bytes += 1 + size;
      return;
    }
    let subject: string;
    try {
      subject = subjects.status(account);
    } catch {
      // Not a subject token: a lost record costs a figure on the dashboard, never an event.
      return;
    }
    // The message in hand (if any) is closed: it leaves as it is, this record opens the next.
    const next: Open = { parts: [json], bytes: ENVELOPE_BYTES + size };
    this.#open.set(account, next);
    const acks = this.#acks;
    const ticket = acks?.ticket();
    this.#publisher.publishBuilt(
      subject,
      () => {
        if (this.#open.get(account) === next) this.#open.delete(account);
        // Buffer.from takes the string's bytes in one copy; TextEncoder (nats.js's encoding of a
        // string payload) allocates a fresh ArrayBuffer each. A turn's lone record leaves in the
        // single-record form, which every writer reads: an idle process pays no envelope for it.
        const parts = next.parts;
        const bytes = Buffer.from(
          parts.length === 1 ? parts.join('') : `${OPEN}${parts.join(',')}${CLOSE}`,
        );
        // Held from now: these bytes are what a retry publishes again.
        if (ticket) acks?.hold(ticket, subject, bytes);
        return bytes;
      },
      ticket?.options,
    );
  }
}
