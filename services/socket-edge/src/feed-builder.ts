import { subjects } from '@herald/proto';
import type { DevicePositions, QueueLayout } from '@herald/queue';
import type { JetStreamManager, NatsConnection } from 'nats';
import type { EdgeConfig } from './config.js';
import { CatchUpFeed, type FeedContext } from './feed/catch-up-feed.js';
import { DirectFeed } from './feed/direct-feed.js';
import type { InboxClient } from './inbox/inbox-client.js';
import type { InboxSocket } from './inbox/inbox-socket.js';
import { InboxSource } from './inbox/inbox-source.js';
import { QueueSource } from './queue/queue-source.js';
import type { EdgeSocket } from './socket/edge-socket.js';
import type { SocketFeed } from './socket/socket-feed.js';

/**
 * How a socket is fed, by its connect: without a device, directly; with one, through a catch-up
 * feed on the inbox store (a herald.v1 socket of an inbox key: the inbox catch-up owns its
 * delivery) or on the recipient's queue stream.
 */
export function feedBuilder(
  config: Pick<
    EdgeConfig,
    'INBOX_CATCH_UP_BATCH' | 'DEVICE_CATCH_UP_RUN' | 'MAX_UNPROVEN_BYTES' | 'NATS_REPLICAS'
  >,
  deps: {
    nc: NatsConnection;
    jsm: Promise<JetStreamManager>;
    layout: QueueLayout;
    inbox: InboxClient;
    devicePositions: DevicePositions;
    inboxPositions: DevicePositions;
    feeds: FeedContext;
  },
): (socket: EdgeSocket, inbox: InboxSocket | undefined) => SocketFeed {
  return (socket, inbox) => {
    const { device, account, recipient } = socket;
    if (device === undefined) return new DirectFeed(socket);
    const source = inbox
      ? new InboxSource(deps.inbox, socket, deps.inboxPositions, config.INBOX_CATCH_UP_BATCH)
      : new QueueSource(
          deps.nc,
          deps.jsm,
          deps.layout.streamOf(account, recipient),
          subjects.queue(account, recipient),
          deps.devicePositions,
          {
            run: config.DEVICE_CATCH_UP_RUN,
            runBytes: config.MAX_UNPROVEN_BYTES,
            replicated: config.NATS_REPLICAS > 1,
          },
        );
    return new CatchUpFeed(socket, device, source, deps.feeds);
  };
}
