import type { JsMsg } from 'nats';

/**
 * While unsure that this drain holds all of the consumer's pending deliveries: re-check delay, ms.
 * Two edges draining one recipient hand the bottom of the queue to each other at this pace (200
 * events took 9 s at 250 ms, 1.2 s at 50 ms: ackall-floor.test.ts); a check is a CONSUMER.INFO
 * and a direct get per proven delivery, paid only while unsure with something proven.
 */
const VERIFY_RETRY_MS = 50;

const UNPROVEN = 0;
const PROVEN = 1;
/** Nakked and not yet delivered again: still pending on the consumer, so the floor stops below it. */
const NAKKED = 2;

/** One delivery of the recipient's AckAll consumer to this drain, not yet covered by an ack. */
interface Entry {
  readonly sseq: number;
  dseq: number;
  msg: JsMsg;
  state: 0 | 1 | 2;
  /** The event's id, set on proof (undefined for a second stream copy of the same id). */
  id?: string | undefined;
  device?: string | undefined;
}

/** What the consumer reports: its ack-pending count, last delivery sequence and stream ack floor. */
export interface ConsumerPendingState {
  numAckPending: number;
  deliveredSeq: number;
  ackFloor: number;
}

/** The deliveries one ack covered, with the ids (and proving devices) to record as delivered. */
export interface FloorAck {
  msg: JsMsg;
  covered: { id: string | undefined; device: string | undefined }[];
}

/**
 * The contiguous proven floor of one recipient's AckAll consumer, as this drain sees it: every
 * delivery it holds, by stream sequence, and which of them a socket proved. One ack, at the
 * highest proven delivery below which every held delivery is proven, covers the whole run.
 *
 * An AckAll ack covers everything pending at or below its stream sequence, including deliveries
 * made to another edge, which this drain cannot see. So it acks only while it is sure it holds
 * every pending delivery: it started with nothing pending and has received every delivery
 * sequence since (a gap is a delivery that went elsewhere). Otherwise it asks the consumer
 * (CONSUMER.INFO) until its own count and last delivery match the server's, and meanwhile acks
 * only as far as the stored events just above the consumer's ack floor are all its own, proven
 * (two edges draining one recipient at once: each acks its own run when it is the lowest).
 *
 * nats-server applies an AckAll ack only when its delivery sequence is above the last one
 * acked, and a nak only when the nakked delivery's is (consumer.go, processAckMsg/processNak): a
 * redelivery carries a higher delivery sequence than later events delivered before it. So the
 * ack goes at the highest proven delivery whose delivery sequence is below that of every
 * delivery held above it: each delivery still held keeps a working nak and a working later ack.
 */
export class AckFloor {
  /** Held deliveries in stream order (at most max_ack_pending of them). */
  #order: Entry[] = [];
  #bySeq = new Map<number, Entry>();
  /** Every pending delivery of the consumer is one of #order. */
  #sure = false;
  /** The next delivery sequence expected, while sure. */
  #expected = 0;
  #maxDseq = 0;
  /** Delivery sequence of the last ack sent (the server's floor, if it applied it). */
  #ackedDseq = 0;
  #verifying = false;
  #retry: NodeJS.Timeout | undefined;
  /** While unsure: a check found every stored event up to this sequence held here and proven. */
  #checkedUpTo = 0;
  readonly #check: () => Promise<ConsumerPendingState | undefined>;
  readonly #nextStored: (fromSeq: number) => Promise<number | undefined>;
  readonly #onChecked: () => void;

  /**
   * @param check reads the consumer's state (CONSUMER.INFO)
   * @param nextStored the stream sequence of the recipient's first stored event at or after one
   * @param onChecked a check found something this drain may ack: acks may go out now
   */
  constructor(
    check: () => Promise<ConsumerPendingState | undefined>,
    nextStored: (fromSeq: number) => Promise<number | undefined>,
    onChecked: () => void,
  ) {
    this.#check = check;
    this.#nextStored = nextStored;
    this.#onChecked = onChecked;
  }

  /** Deliveries held and not yet covered by an ack. */
  get size(): number {
    return this.#order.length;
  }

  /**
   * A run starts on the consumer, whose state was read at the lookup: sure when what it reports
   * pending is exactly what this drain holds.
   */
  start(deliveredSeq: number, ackPending: number): void {
    this.#sure =
      ackPending === this.#order.length &&
      (this.#order.length === 0 || deliveredSeq === this.#maxDseq);
    this.#expected = deliveredSeq + 1;
    this.#maxDseq = Math.max(this.#maxDseq, deliveredSeq);
  }

  /** A delivery reached this drain (a redelivery replaces the entry of its stream sequence). */
  delivered(msg: JsMsg): void {
    const { streamSequence: sseq, deliverySequence: dseq } = msg.info;
    if (dseq !== this.#expected) this.#sure = false;
    this.#expected = dseq + 1;
    this.#maxDseq = Math.max(this.#maxDseq, dseq);
    const known = this.#bySeq.get(sseq);
    if (known) {
      known.msg = msg;
      known.dseq = dseq;
      known.state = UNPROVEN;
      return;
    }
    const entry: Entry = { sseq, dseq, msg, state: UNPROVEN };
    this.#bySeq.set(sseq, entry);
    let i = this.#order.length;
    while (i > 0 && (this.#order[i - 1] as Entry).sseq > sseq) i--;
    this.#order.splice(i, 0, entry);
  }

  /** A socket proved the delivery; `id` is recorded as delivered once an ack covers it. */
  proven(msg: JsMsg, id: string | undefined, device: string | undefined): void {
    const entry = this.#bySeq.get(msg.info.streamSequence);
    if (!entry || entry.state === PROVEN) return;
    entry.state = PROVEN;
    entry.id = id;
    entry.device = device;
  }

  /** The delivery was nakked: it stays pending on the consumer until delivered again. */
  nakked(msg: JsMsg): void {
    const entry = this.#bySeq.get(msg.info.streamSequence);
    if (entry && entry.msg === msg) entry.state = NAKKED;
  }

  /**
   * The ack to send now, if any, and what it covers (removed from what is held). Undefined when
   * nothing can be acked: the lowest held delivery is unproven, or this drain is not sure it holds
   * everything pending (a check is then under way).
   */
  take(): FloorAck | undefined {
    const order = this.#order;
    let proven = 0;
    while (proven < order.length && (order[proven] as Entry).state === PROVEN) proven++;
    if (proven === 0) return undefined;
    let limit = Number.POSITIVE_INFINITY;
    if (!this.#sure) {
      limit = this.#checkedUpTo;
      this.#checkedUpTo = 0;
      this.#verify();
    }
    let minAbove = Number.POSITIVE_INFINITY;
    for (let i = order.length - 1; i >= proven; i--)
      minAbove = Math.min(minAbove, (order[i] as Entry).dseq);
    for (let i = proven - 1; i >= 0; i--) {
      const entry = order[i] as Entry;
      if (entry.sseq <= limit && entry.dseq < minAbove && entry.dseq > this.#ackedDseq) {
        this.#ackedDseq = entry.dseq;
        const covered = order.splice(0, i + 1);
        for (const e of covered) this.#bySeq.delete(e.sseq);
        return { msg: entry.msg, covered: covered.map(({ id, device }) => ({ id, device })) };
      }
      minAbove = Math.min(minAbove, entry.dseq);
    }
    return undefined;
  }

  /** Keeps proven deliveries waiting below an unproven one from expiring (ack_wait). */
  touch(): void {
    for (const entry of this.#order) if (entry.state === PROVEN) entry.msg.working();
  }

  /** Proven deliveries no ack covered (the drain stops: the caller nakks them); all is forgotten. */
  takeProven(): JsMsg[] {
    const proven = this.#order.filter((e) => e.state === PROVEN).map((e) => e.msg);
    this.clear();
    return proven;
  }

  /** Forgets everything (the consumer is gone, or the drain stopped). */
  clear(): void {
    this.#order = [];
    this.#bySeq.clear();
    this.#sure = false;
    this.#checkedUpTo = 0;
    this.#maxDseq = 0;
    this.#ackedDseq = 0;
    clearTimeout(this.#retry);
    this.#retry = undefined;
  }

  /**
   * Asks the consumer whether its pending deliveries are exactly the ones held here: the same
   * count and no delivery since the last one received. Entries at or below the server's ack
   * floor were acked by another edge and are dropped first. A mismatch (another edge holds some,
   * an ack of this drain is not applied yet, a delivery is on its way) asks again a little later.
   */
  #verify(): void {
    if (this.#verifying || this.#retry) return;
    this.#verifying = true;
    void this.#checkPending()
      .catch(() => false)
      .then((found) => {
        this.#verifying = false;
        if (found) {
          this.#onChecked();
        } else if (this.#order.length > 0) {
          this.#retry = setTimeout(() => {
            this.#retry = undefined;
            if (!this.#sure) this.#verify();
          }, VERIFY_RETRY_MS);
          this.#retry.unref();
        }
      });
  }

  /**
   * True when this drain holds everything pending (it is sure from now on) or, failing that, when
   * the stored events just above the consumer's ack floor are held here and proven (#checkedUpTo).
   * An AckAll consumer's pending deliveries are exactly its stored events above its ack floor and
   * up to its last delivered one, so the walk, one direct get per event, finds how far an ack
   * covers only what this drain proved, while another edge holds deliveries further up.
   */
  async #checkPending(): Promise<boolean> {
    const state = await this.#check();
    if (!state) return false;
    const acked = this.#order.findIndex((e) => e.sseq > state.ackFloor);
    const drop = acked < 0 ? this.#order.length : acked;
    for (const e of this.#order.splice(0, drop)) this.#bySeq.delete(e.sseq);
    if (state.numAckPending === this.#order.length && state.deliveredSeq === this.#maxDseq) {
      this.#sure = true;
      this.#expected = this.#maxDseq + 1;
      return true;
    }
    let upTo = 0;
    let from = state.ackFloor + 1;
    // A copy: deliveries that arrive during the walk are not part of it.
    for (const entry of [...this.#order]) {
      if (entry.state !== PROVEN || (await this.#nextStored(from)) !== entry.sseq) break;
      upTo = entry.sseq;
      from = entry.sseq + 1;
    }
    this.#checkedUpTo = upTo;
    return upTo > 0;
  }
}
