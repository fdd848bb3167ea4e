import type { DevicePositions } from '@herald/queue';
import type { EventFrames } from '../socket/framing.js';
import type { FeedNotice } from '../socket/socket-feed.js';

/** One stored event a source read, at its place in the source's order. */
export interface FeedEvent {
  /** Its position in the source: a stream sequence (the queue), the store's sequence (the inbox). */
  position: number;
  frames: EventFrames;
}

/** What one read of a source found: a run of stored events after a position, in order. */
export interface FeedRun {
  events: readonly FeedEvent[];
  /** The read saw every stored event of the recipient up to here (at least the last one's position). */
  covered: number;
  /** More may be stored after `covered`: read on. */
  more: boolean;
}

/** Where a source's device positions are kept. */
export interface PositionSpace {
  /** The device positions bucket (its key space); without it a device starts from the oldest event. */
  store: Pick<DevicePositions, 'read' | 'record'> | undefined;
  /** The `stream` a position of this source names: a position of another says nothing here. */
  stream: string;
}

/**
 * What a catch-up feed reads: the stored events of one recipient after a position, oldest first
 * (src/feed/catch-up-feed.ts). The queue's source reads the recipient's stream, the inbox's asks
 * the inbox store. The source also says which notice may mean something new for it, where its
 * positions are kept, and how a copy from the drain or a live push is matched with what it reads.
 */
export interface FeedSource {
  /** What the feed's log lines call it (`device`, `inbox`). */
  readonly name: string;
  /** The recipient notice after which something new may be stored for this source. */
  readonly wakesOn: FeedNotice;
  /**
   * How a copy handed by the drain or a live push is matched with what the source reads: by its
   * stream position (the queue: a drained copy carries it, so the feed holds it only while the
   * catch-up is behind it; a live one is not the queue's and goes straight to the socket), or by
   * its event id (the inbox, whose positions are the store's: a copy's place is unknown, so it
   * waits for the connect's catch-up, and live events go through the feed too).
   */
  readonly keyedBy: 'position' | 'id';
  readonly positions: PositionSpace;
  /** The most events one read asks for. */
  readonly run: number;
  /** The stored events after `after`, oldest first, at most `max` of them. */
  read(after: number, max: number): Promise<FeedRun>;
}
