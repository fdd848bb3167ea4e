import type { Logger } from '@herald/kit';
import type { DevicePositions } from '@herald/queue';
import type { StatusBatcher } from '@herald/status-client';
import type { Delivery } from '../socket/delivery.js';
import type { EventFrames } from '../socket/framing.js';
import type { InboxClient } from './inbox-client.js';

/** The inbox position's `stream` field: the store's sequences, not a queue partition's. */
export const INBOX_STREAM = 'inbox';

export interface InboxFeedDeps {
  inbox: Pick<InboxClient, 'after'>;
  /** Inbox positions (the device bucket's `inbox.` key space); without it a device starts at 0. */
  inboxPositions?: DevicePositions | undefined;
  account: string;
  recipient: string;
  /** Events asked of the store per `after` request (INBOX_CATCH_UP_BATCH). */
  batch: number;
  /** Ids a socket remembers to drop a second copy (INBOX_DEDUPE_IDS): proven ones beyond it are forgotten. */
  dedupeIds: number;
  /**
   * Most events and bytes held (arrived during a catch-up, not written yet): the socket's own
   * MAX_UNPROVEN_* caps. Past either an event is not taken (a live one is then queued by its
   * sender, a drained one nakked), so a catch-up stalled on a reader that stopped holds no more.
   */
  maxHeld: { events: number; bytes: number };
  logger: Logger;
  statusBatcher: Pick<StatusBatcher, 'add'>;
  /** The edge's QUEUE_CHECK_CONCURRENCY slots, shared with the drainers and device feeds. */
  limitChecks: <T>(check: () => Promise<T>) => Promise<T>;
}

/** One event id handed to the socket in this session, by whichever path came first. */
export interface Entry {
  proven: boolean;
  lost: boolean;
  /** Deliveries (live or drain) of the same id following this write's outcome. */
  waiters: Delivery[];
  /** Not written yet: held while the catch-up runs, so the device gets its events in order. */
  held?: EventFrames | undefined;
}

/** Below this many bytes an answer shorter than its limit was not cut to fit (NATS's 1 MiB, halved). */
const UNCUT_BYTES = 512 * 1024;

export function mayBeCut(events: { id: string; payload_json: string }[]): boolean {
  let bytes = 0;
  for (const e of events) bytes += e.payload_json.length * 3 + e.id.length + 64;
  return bytes >= UNCUT_BYTES;
}

/**
 * The delivery of one write of `entry`: its waiters (live or drain deliveries of the same id) hear
 * what the socket reports; a proof nobody waits on is `delivered`; then `settled`.
 */
export function trackedWrite(
  entry: Entry,
  hooks: { delivered: () => void; lost: () => void; settled: () => void },
): Delivery {
  return {
    // A live event's write keeps its proof deadline (LIVE_PROOF_TIMEOUT_MS).
    live: entry.waiters.some((d) => d.live),
    written: () => {
      for (const d of entry.waiters) d.written();
    },
    overdue: () => {
      for (const d of entry.waiters) d.overdue();
    },
    proven: () => {
      entry.proven = true;
      const waiters = entry.waiters;
      entry.waiters = [];
      if (waiters.length === 0) hooks.delivered();
      for (const d of waiters) d.proven();
      hooks.settled();
    },
    lost: () => {
      hooks.lost();
      hooks.settled();
    },
  };
}
