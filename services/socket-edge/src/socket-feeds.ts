import type { Logger } from '@herald/kit';
import { InboxUnreadNotice, subjects } from '@herald/proto';
import type { DevicePositions } from '@herald/queue';
import { JSONCodec, type Msg } from 'nats';
import type { z } from 'zod';
import type { InboxClient } from './inbox/inbox-client.js';
import { InboxFeed } from './inbox/inbox-feed.js';
import { DeviceFeed } from './queue/device-feed.js';
import type { QueueDrainerDeps } from './queue/queue-drainer.js';
import type { EdgeSocket } from './socket/edge-socket.js';

const json = JSONCodec();

/** What an edge's sessions share for inbox keys. */
export interface InboxSessionDeps {
  client: InboxClient;
  /** Device positions in the inbox (the device bucket's `inbox.` key space). */
  positions?: DevicePositions | undefined;
  /** INBOX_CATCH_UP_BATCH and INBOX_DEDUPE_IDS. */
  batch: number;
  dedupeIds: number;
  /** MAX_UNPROVEN_EVENTS and MAX_UNPROVEN_BYTES: what an inbox feed may hold during a catch-up. */
  maxHeld: { events: number; bytes: number };
}

/**
 * The inbox store's unread count after a change (`rt.unread.<account>.<recipient>`): every
 * herald.v1 socket of an inbox key gets `{"type":"inbox","unread"}` and its device feed reads on
 * (the change may be a new event). Plain-framing sockets and keys without inbox mode get nothing.
 */
export function forwardUnread(sockets: Iterable<EdgeSocket>, msg: Msg, logger: Logger): void {
  const notice = decodeNotice(InboxUnreadNotice, msg.data);
  if (!notice) {
    logger.warn({ subject: msg.subject }, 'ignoring malformed unread notice');
    return;
  }
  for (const socket of sockets) {
    if (!socket.inbox) continue;
    socket.inbox.unread(notice.unread);
    socket.feed?.kick();
  }
}

/**
 * A device socket's feed: an {@link InboxFeed} for a herald.v1 socket of an inbox key (the inbox
 * catch-up owns its delivery), else a {@link DeviceFeed} on the recipient's queue. `stopKey` names
 * the position it records, so the same device's next feed waits for that record only: inbox and
 * queue positions are two key spaces.
 */
export function newFeed(
  socket: EdgeSocket,
  device: string,
  deps: QueueDrainerDeps & { devicePositions?: DevicePositions; inbox?: InboxSessionDeps },
): { feed: InboxFeed | DeviceFeed; stopKey: string } {
  const inbox = deps.inbox;
  if (socket.inbox && inbox) {
    const feed = new InboxFeed(socket, device, {
      ...deps,
      inbox: inbox.client,
      inboxPositions: inbox.positions,
      batch: inbox.batch,
      dedupeIds: inbox.dedupeIds,
      maxHeld: inbox.maxHeld,
    });
    return { feed, stopKey: feedStopKey(socket, device) };
  }
  const { account, recipient } = deps;
  const feed = new DeviceFeed(socket, device, {
    ...deps,
    stream: deps.layout.streamOf(account, recipient),
    subject: subjects.queue(account, recipient),
  });
  return { feed, stopKey: device };
}

/** The key of a device socket's position record among its session's running stops. */
export function feedStopKey(socket: EdgeSocket, device: string): string {
  return socket.inbox ? `inbox:${device}` : device;
}

/** A core-NATS notice's body checked with its schema; undefined when it is not one. */
export function decodeNotice<T extends z.ZodType>(
  schema: T,
  data: Uint8Array,
): z.infer<T> | undefined {
  let body: unknown;
  try {
    body = json.decode(data);
  } catch {
    return undefined;
  }
  const parsed = schema.safeParse(body);
  return parsed.success ? parsed.data : undefined;
}
