import { STATUS_BATCH_RECORDS_MAX, type StatusEvent, subjects } from '@herald/proto';
import type { Publisher } from './turn-publisher.js';

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
  account: string;
  parts: string[];
  /** Payload bytes of the message as it stands, envelope included. */
  bytes: number;
}

/**
 * Coalesces the status records a process produces in one event-loop turn into one `StatusBatch`
 * message per account (proto/status.ts), published on `subjects.status(account)` at the end of the
 * turn (setImmediate): one NATS message, one stream write and one writer ack for a turn's records
 * instead of one each. A message holds at most `maxRecords` records and `maxBytes` bytes; a record
 * that would cross either bound sends the message in hand at once and opens the next.
 *
 * Fire-and-forget, as the single publishes were: nothing here can fail a dispatch or a delivery,
 * and a record waits at most one turn, which on an idle process is at once.
 */
export class StatusBatcher {
  readonly #publisher: Publisher;
  readonly #limits: StatusBatchLimits;
  #open = new Map<string, Open>();
  #scheduled = false;

  constructor(publisher: Publisher, limits: StatusBatchLimits = DEFAULT_STATUS_BATCH_LIMITS) {
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
  }

  /** Adds a record to this turn's message for its account. */
  add(record: StatusEvent): void {
    const json = JSON.stringify(record);
    const size = Buffer.byteLength(json);
    let open = this.#open.get(record.account_id);
    if (
      open &&
      (open.parts.length >= this.#limits.maxRecords ||
        open.bytes + 1 + size > this.#limits.maxBytes)
    ) {
      this.#send(open);
      open = undefined;
    }
    if (open) {
      open.parts.push(json);
      open.bytes += 1 + size;
    } else {
      this.#open.set(record.account_id, {
        account: record.account_id,
        parts: [json],
        bytes: ENVELOPE_BYTES + size,
      });
    }
    if (!this.#scheduled) {
      this.#scheduled = true;
      setImmediate(this.#flush);
    }
  }

  readonly #flush = (): void => {
    this.#scheduled = false;
    const open = this.#open;
    this.#open = new Map();
    for (const o of open.values()) this.#send(o);
  };

  #send(open: Open): void {
    try {
      // Buffer.from takes the string's bytes in one copy; TextEncoder (nats.js's encoding of a
      // string payload) allocates a fresh ArrayBuffer each.
      this.#publisher.publish(
        subjects.status(open.account),
        Buffer.from(`${OPEN}${open.parts.join(',')}${CLOSE}`),
      );
    } catch {
      // The connection is closing (or the account is not a subject token): a lost record costs a
      // figure on the dashboard, never an event.
    }
  }
}
