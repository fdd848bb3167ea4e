import type { Delivery } from './delivery.js';

export interface ProofLedgerOptions {
  /** Most deliveries written and unproven; a write beyond it is refused (slow consumer). */
  maxEvents: number;
  /** Most bytes written and unproven; a write beyond it is refused unless the ledger is empty. */
  maxBytes: number;
  /** How long a live delivery may stay unproven before it is told `overdue`, ms. */
  liveProofTimeoutMs: number;
}

interface Entry {
  id: string;
  bytes: number;
  delivery: Delivery;
  /** Epoch ms after which a live delivery is overdue; undefined for queued ones. */
  deadline: number | undefined;
  overdue: boolean;
}

/**
 * What one socket was written and has not proven received, in write order. It is the slow-reader
 * limit: it counts events and bytes the client has not proven, not what sits in this process's
 * send buffer, so a reader that stops is caught however much the kernels between the two hold.
 * It also bounds the socket's memory: each entry holds only the delivery (whose event bytes are
 * shared by every socket it went to), and there are at most `maxEvents` of them.
 */
export class ProofLedger {
  readonly #opts: ProofLedgerOptions;
  /** The socket's `device`, told to every delivery it proves. */
  readonly #device: string | undefined;
  /** By write sequence; a Map keeps insertion order and deletes in O(1). */
  readonly #entries = new Map<number, Entry>();
  /**
   * How many entries carry each id (a redelivery written twice has two), so an ack of an id stops
   * scanning once it settled them all: acks come in write order, so normally at the first entry.
   */
  readonly #idCounts = new Map<string, number>();
  #bytes = 0;
  #seq = 0;
  #closed = false;
  #timer: NodeJS.Timeout | undefined;

  constructor(opts: ProofLedgerOptions, device?: string) {
    this.#opts = opts;
    this.#device = device;
  }

  get count(): number {
    return this.#entries.size;
  }

  get bytes(): number {
    return this.#bytes;
  }

  /** The sequence of the latest write (0 before any): a ping sent now covers every write up to it. */
  get lastSeq(): number {
    return this.#seq;
  }

  /** Whether writing `bytes` more stays within the caps. An empty ledger takes any one event. */
  fits(bytes: number): boolean {
    return this.#within(bytes, 1);
  }

  /**
   * Whether writing `bytes` more keeps the ledger at most half full: the queue drainer writes only
   * then, so a drain paces itself to the reader instead of running into the slow-consumer cap.
   */
  hasRoomFor(bytes: number): boolean {
    return this.#within(bytes, 0.5);
  }

  /** Records a write; returns its sequence. */
  add(id: string, bytes: number, delivery: Delivery): number {
    const seq = ++this.#seq;
    const deadline = delivery.live ? Date.now() + this.#opts.liveProofTimeoutMs : undefined;
    this.#entries.set(seq, { id, bytes, delivery, deadline, overdue: false });
    this.#idCounts.set(id, (this.#idCounts.get(id) ?? 0) + 1);
    this.#bytes += bytes;
    if (deadline !== undefined && !this.#timer) this.#arm(deadline);
    return seq;
  }

  /** The client proved every write up to `seq` (plain framing: the pong of a ping sent after them). */
  proveUpTo(seq: number): void {
    for (const [s, entry] of this.#entries) {
      if (s > seq) break;
      this.#settle(s, entry).proven(this.#device);
    }
  }

  /** The client acked `id` (herald.v1): every write of that id is proven. Unknown ids are ignored. */
  proveId(id: string): void {
    let left = this.#idCounts.get(id) ?? 0;
    if (left === 0) return;
    for (const [s, entry] of this.#entries) {
      if (entry.id !== id) continue;
      this.#settle(s, entry).proven(this.#device);
      if (--left === 0) return;
    }
  }

  /** The socket is gone: every unproven write is lost, and later ones are refused by the socket. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    clearTimeout(this.#timer);
    this.#timer = undefined;
    for (const [s, entry] of this.#entries) this.#settle(s, entry).lost();
  }

  #within(bytes: number, fraction: number): boolean {
    if (this.#entries.size === 0) return true;
    return (
      this.#entries.size + 1 <= this.#opts.maxEvents * fraction &&
      this.#bytes + bytes <= this.#opts.maxBytes * fraction
    );
  }

  #settle(seq: number, entry: Entry): Delivery {
    this.#entries.delete(seq);
    const count = (this.#idCounts.get(entry.id) ?? 1) - 1;
    if (count > 0) this.#idCounts.set(entry.id, count);
    else this.#idCounts.delete(entry.id);
    this.#bytes -= entry.bytes;
    return entry.delivery;
  }

  /**
   * One timer per socket, set for the oldest live deadline not yet reached; deadlines grow with
   * the write sequence, so a scan from the start stops at the first that is still ahead.
   */
  #arm(deadline: number): void {
    this.#timer = setTimeout(() => this.#expire(), Math.max(0, deadline - Date.now()));
    this.#timer.unref();
  }

  #expire(): void {
    this.#timer = undefined;
    const now = Date.now();
    for (const entry of this.#entries.values()) {
      if (entry.deadline === undefined || entry.overdue) continue;
      if (entry.deadline > now) {
        this.#arm(entry.deadline);
        return;
      }
      entry.overdue = true;
      entry.delivery.overdue();
    }
  }
}
