import { pusherRecipient } from '@herald/access';
import Echo from 'laravel-echo';
import { describe, expect, it } from 'vitest';
import { type RunningEdge, type Stack, waitUntil } from './fixture.js';
import {
  connected,
  liveOnceMember,
  type Pusher,
  type PusherApps,
  pusherClient,
  usePusherDoor,
} from './pusher-fixture.js';

let stack: Stack;
let edge: RunningEdge;
let apps: PusherApps;
const clients: Pusher[] = [];

usePusherDoor(
  (d) => {
    ({ stack, edge, apps } = d);
  },
  { clients },
);

const NOTIFICATION = 'Illuminate\\Notifications\\Events\\BroadcastNotificationCreated';

describe('Laravel Echo (2.5) on the Pusher door', () => {
  it('gets a notification on the private user channel it subscribed, with no sign-in', async () => {
    const test = apps.make({ user_channel: 'private-App.Models.User.{id}' });
    const pusher = pusherClient(stack, edge.port, test);
    clients.push(pusher);
    await connected(pusher);
    const echo = new Echo({ broadcaster: 'pusher', key: test.app.key, client: pusher });
    const got: unknown[] = [];
    echo.private('App.Models.User.21').notification((n: unknown) => got.push(n));
    // What Laravel's broadcast of a notification is, as the Pusher HTTP API stores it.
    const envelope = JSON.stringify({
      event: NOTIFICATION,
      channel: 'private-App.Models.User.21',
      data: JSON.stringify({ id: 'n-1', type: 'App\\Notifications\\Shipped', order: 5 }),
    });
    const recipient = pusherRecipient(test.app.app_id, '21', 'any') as string;
    const { reply } = await liveOnceMember(stack, recipient, envelope);
    expect(await reply).toEqual({ v: 1, sockets: 1 });
    await waitUntil('the notification', () => got.length === 1);
    expect(got[0]).toEqual({
      herald_id: expect.any(String),
      id: 'n-1',
      type: 'App\\Notifications\\Shipped',
      order: 5,
    });
  });
});
