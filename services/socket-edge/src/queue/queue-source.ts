import { isNoMessageFound } from '@herald/nats';
import type { DevicePositions } from '@herald/queue';
import type { JetStreamManager, MsgRequest, StoredMsg } from 'nats';
import type { FeedEvent, FeedRun, FeedSource, PositionSpace } from '../feed/feed-source.js';
import { edgeEventOf } from '../socket/edge-event.js';
import { EventFrames } from '../socket/framing.js';

/**
 * What a device socket catches up on from the recipient's queue: the events their partition
 * stream stores on the recipient's subject after the device's position (read by subject, so it
 * also yields events the durable consumer already acked for another device). A position is a
 * stream sequence, recorded in the device positions bucket with the stream's name; a drained
 * copy carries its sequence, which is how the feed matches it. A queued notice wakes it.
 */
export class QueueSource implements FeedSource {
  readonly #jsm: Promise<JetStreamManager>;
  readonly #subject: string;
  readonly positions: PositionSpace;

  /**
   * @param stream the recipient's partition stream
   * @param subject the recipient's queue subject
   * @param positions the device positions bucket (none: a device starts from the first stored event)
   */
  constructor(
    jsm: Promise<JetStreamManager>,
    stream: string,
    subject: string,
    positions: DevicePositions | undefined,
  ) {
    this.#jsm = jsm;
    this.#subject = subject;
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

  /** One stored message per read, as STREAM.MSG.GET `next_by_subj` answers. */
  get run(): number {
    return 1;
  }

  async read(after: number, max: number): Promise<FeedRun> {
    const events: FeedEvent[] = [];
    let covered = after;
    while (events.length < max) {
      const msg = await this.#next(covered + 1);
      if (!msg) return { events, covered, more: false };
      covered = msg.seq;
      const event = edgeEventOf(msg.header, msg.data, () => ({
        id: `seq-${msg.seq}`,
        ts: Math.floor(msg.time.getTime()),
      }));
      events.push({ position: msg.seq, frames: new EventFrames(event) });
    }
    return { events, covered, more: true };
  }

  /** The subject's first stored event at or after `seq`, or undefined. */
  async #next(seq: number): Promise<StoredMsg | undefined> {
    const jsm = await this.#jsm;
    try {
      // nats.js types STREAM.MSG.GET without next_by_subj, which servers >= 2.9 accept.
      const query = { next_by_subj: this.#subject, seq } as unknown as MsgRequest;
      return await jsm.streams.getMessage(this.positions.stream, query);
    } catch (err) {
      if (isNoMessageFound(err)) return undefined;
      throw err;
    }
  }
}
