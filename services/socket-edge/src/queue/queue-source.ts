import { isNoMessageFound } from '@herald/nats';
import type { DevicePositions } from '@herald/queue';
import {
  ErrorCode,
  type JetStreamManager,
  type Msg,
  type MsgHdrs,
  type MsgRequest,
  type NatsConnection,
  RequestStrategy,
} from 'nats';
import type { FeedEvent, FeedRun, FeedSource, PositionSpace } from '../feed/feed-source.js';
import { edgeEventOf } from '../socket/edge-event.js';
import { EventFrames } from '../socket/framing.js';

/** How long one batched direct get may take to answer in full (its EOB included), ms. */
const DIRECT_GET_TIMEOUT_MS = 5000;

/** How a device's catch-up reads the recipient's stream. */
export interface QueueSourceOptions {
  /** The most events one read asks for (DEVICE_CATCH_UP_RUN). */
  run: number;
  /** The most bytes one read asks for (MAX_UNPROVEN_BYTES: what the socket may hold unproven); one event larger still comes. */
  runBytes: number;
  /**
   * The stream is replicated (NATS_REPLICAS > 1): a direct get may be answered by a follower that
   * has not applied the newest events yet, so a read that found the end asks the leader
   * (STREAM.MSG.GET) once whether anything follows. On one server the direct get is the leader's.
   */
  replicated: boolean;
}

/**
 * What a device socket catches up on from the recipient's queue: the events their partition
 * stream stores on the recipient's subject after the device's position (read by subject, so it
 * also yields events the durable consumer already acked for another device). A position is a
 * stream sequence, recorded in the device positions bucket with the stream's name; a drained
 * copy carries its sequence, which is how the feed matches it. A queued notice wakes it.
 *
 * One read is a run: one batched DIRECT.GET (`{"seq","next_by_subj","batch","max_bytes"}`,
 * ADR-31, nats-server >= 2.11; the partition streams have `allow_direct`), answered as up to
 * `run` messages and an EOB status that says how many more the subject has. A stream without a
 * direct get responder (made by an older release, not yet updated) is read as before, one
 * STREAM.MSG.GET `next_by_subj` per event.
 */
export class QueueSource implements FeedSource {
  readonly #nc: NatsConnection;
  readonly #jsm: Promise<JetStreamManager>;
  readonly #subject: string;
  readonly #opts: QueueSourceOptions;
  readonly positions: PositionSpace;

  /**
   * @param stream the recipient's partition stream
   * @param subject the recipient's queue subject
   * @param positions the device positions bucket (none: a device starts from the first stored event)
   */
  constructor(
    nc: NatsConnection,
    jsm: Promise<JetStreamManager>,
    stream: string,
    subject: string,
    positions: DevicePositions | undefined,
    opts: QueueSourceOptions,
  ) {
    this.#nc = nc;
    this.#jsm = jsm;
    this.#subject = subject;
    this.#opts = opts;
    this.positions = { store: positions, stream };
  }

  get name(): string {
    return 'device';
  }

  get wakesOn(): 'queued' {
    return 'queued';
  }

  get keyedBy(): 'position' {
    return 'position';
  }

  get run(): number {
    return this.#opts.run;
  }

  async read(after: number, max: number): Promise<FeedRun> {
    let run: FeedRun;
    try {
      run = await this.#directRun(after, max);
    } catch (err) {
      if (!isNoResponders(err)) throw err;
      return this.#readOneByOne(after, max);
    }
    if (run.more || !this.#opts.replicated) return run;
    // The follower that answered may lag the leader: the leader says whether the run is the end.
    const next = await this.#next(run.covered + 1);
    if (!next) return run;
    return { events: [...run.events, eventOf(next)], covered: next.seq, more: true };
  }

  /** One batched direct get: up to `max` events after `after`, then the EOB (or 404: none). */
  async #directRun(after: number, max: number): Promise<FeedRun> {
    const stream = this.positions.stream;
    const request = { seq: after + 1, next_by_subj: this.#subject, batch: max };
    const answers = await this.#nc.requestMany(
      `$JS.API.DIRECT.GET.${stream}`,
      JSON.stringify({ ...request, max_bytes: this.#opts.runBytes }),
      { strategy: RequestStrategy.SentinelMsg, maxWait: DIRECT_GET_TIMEOUT_MS },
    );
    const events: FeedEvent[] = [];
    let covered = after;
    for await (const m of answers) {
      const code = m.headers?.code ?? 0;
      if (code === 0 && m.headers?.get('Nats-Sequence')) {
        const event = eventOf(directMsg(m));
        events.push(event);
        covered = event.position;
        // An event stored with an empty payload reads as the sentinel: the run ends at it. A
        // server before 2.11 answers a batch with its first message alone, without
        // Nats-Num-Pending (ADR-31): a run of one, not a wait for an EOB that never comes.
        if (m.data.length === 0 || !m.headers?.has('Nats-Num-Pending')) {
          return { events, covered, more: true };
        }
        continue;
      }
      if (code === 404) return { events, covered, more: false };
      if (code === 204) {
        const pending = Number(m.headers?.get('Nats-Num-Pending') || 0);
        return { events, covered, more: pending > 0 };
      }
      throw new Error(`direct get of ${stream}: ${code} ${m.headers?.description ?? ''}`);
    }
    // No EOB within the wait: what came is in order and may be written; the rest is read next.
    if (events.length > 0) return { events, covered, more: true };
    throw new Error(`direct get of ${stream}: no answer in ${DIRECT_GET_TIMEOUT_MS} ms`);
  }

  async #readOneByOne(after: number, max: number): Promise<FeedRun> {
    const events: FeedEvent[] = [];
    let covered = after;
    while (events.length < max) {
      const msg = await this.#next(covered + 1);
      if (!msg) return { events, covered, more: false };
      covered = msg.seq;
      events.push(eventOf(msg));
    }
    return { events, covered, more: true };
  }

  /** The subject's first stored event at or after `seq` (the leader's STREAM.MSG.GET), or undefined. */
  async #next(seq: number): Promise<StoredEvent | undefined> {
    const jsm = await this.#jsm;
    try {
      // nats.js types STREAM.MSG.GET without next_by_subj, which servers >= 2.9 accept.
      const query = { next_by_subj: this.#subject, seq } as unknown as MsgRequest;
      const m = await jsm.streams.getMessage(this.positions.stream, query);
      return { seq: m.seq, header: m.header, data: m.data, time: () => m.time.getTime() };
    } catch (err) {
      if (isNoMessageFound(err)) return undefined;
      throw err;
    }
  }
}

/** A stored message as either read gives it. */
interface StoredEvent {
  seq: number;
  header: MsgHdrs | undefined;
  data: Uint8Array;
  time(): number;
}

function directMsg(m: Msg): StoredEvent {
  const header = m.headers as MsgHdrs;
  return {
    seq: Number(header.get('Nats-Sequence')),
    header,
    data: m.data,
    time: () => Date.parse(header.get('Nats-Time-Stamp')),
  };
}

function eventOf(msg: StoredEvent): FeedEvent {
  const event = edgeEventOf(msg.header, msg.data, () => ({
    id: `seq-${msg.seq}`,
    ts: Math.floor(msg.time()),
  }));
  return { position: msg.seq, frames: new EventFrames(event) };
}

function isNoResponders(err: unknown): boolean {
  return (err as { code?: unknown } | undefined)?.code === ErrorCode.NoResponders;
}
