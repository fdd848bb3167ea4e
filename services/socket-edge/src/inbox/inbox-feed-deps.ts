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
