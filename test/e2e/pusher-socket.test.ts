import { pusherRecipient } from '@herald/access';
import { eventually } from '@herald/testkit';
import { afterAll, describe, expect, it } from 'vitest';
import { notify, useStack } from './fixtures.js';
import { type PusherClient, pusherBackend, pusherClient } from './pusher-fixtures.js';

/**
 * The Pusher door end to end (issue 41): an app made by auth (`createPusherApp`), the stock
 * pusher-js connected to the socket edge as a process and signed in with the stock `pusher`
 * library's signature, and a `POST /notify` with the app's bound key to the user's recipient:
 * ingress answers `sent` (the edge saw the client's pusher:pong) and `pusher.user` gets the event.
 */

const stack = useStack();
const clients: PusherClient[] = [];
afterAll(() => {
  for (const c of clients) c.disconnect();
});

describe('the Pusher door, end to end', () => {
  it('delivers /notify to a signed-in pusher-js user, answered sent after its pong', async () => {
    const s = stack();
    const { id: account } = await s.createAccount();
    const key = await s.createKey({ account, kind: 'test', client: 'mobile' });
    const app = await s.createPusherApp({ account, keyId: key.id, userIds: 'any' });
    const pusher = pusherClient(s, app, pusherBackend(s, app), { userId: '1' });
    clients.push(pusher);
    const got: unknown[] = [];
    pusher.user.bind('herald:event', (data) => got.push(data));
    pusher.signin();
    const to = pusherRecipient(app.app_id, '1', 'any') as string;
    // Until the signed-in socket joined its recipient's session, /notify queues (202); the
    // queued copies reach it too, once it has.
    let sent: { status: number; body: { id?: string; status?: string } } | undefined;
    await eventually(
      async () => {
        const res = await notify(s, { account, key }, to, { hello: 'pusher' });
        if (res.body.status !== 'sent') return false;
        sent = res;
        return true;
      },
      'a /notify answered sent',
      30_000,
    );
    expect(sent?.status).toBe(200);
    await eventually(
      () => got.some((d) => (d as { herald_id?: string }).herald_id === sent?.body.id),
      'the sent event at pusher.user',
      20_000,
    );
    expect(got).toContainEqual({ herald_id: sent?.body.id, hello: 'pusher' });
  });
});
