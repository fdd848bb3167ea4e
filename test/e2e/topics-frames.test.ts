import type { TestSocket } from '@herald/testkit';
import { describe, expect, it } from 'vitest';
import { connect, eventually, newTenant, type Tenant, useStack } from './fixtures.js';
import { idsOf, inboxTenant, v1Socket } from './inbox-fixtures.js';
import { notifyTopic, putMembers, recipients } from './topic-fixtures.js';

/**
 * Every path a topic copy reaches a socket on carries `"topic"` on its frame (issue 44): live,
 * the drain of the offline queue, a device's catch-up from its position in the queue, and an
 * inbox key's device catching up from the inbox store.
 */
describe('topics: the topic on every frame of a copy', () => {
  const stack = useStack({ services: ['auth', 'ingress-api', 'socket-edge', 'status'] });

  /** Sends to `topic` (made of `members`) and answers the topic event's id. */
  async function send(tenant: Tenant, topic: string, members: string[]): Promise<string> {
    expect((await putMembers(stack(), tenant, topic, members)).status).toBe(200);
    const res = await notifyTopic(stack(), tenant, topic);
    expect(res.status, res.text).toBe(202);
    return res.body.id as string;
  }

  /** The one event the socket gets, once it has it. */
  async function oneEvent(socket: TestSocket, what: string) {
    await eventually(() => idsOf(socket).length >= 1, what);
    const [event] = socket.events();
    expect(new Set(idsOf(socket)).size).toBe(1);
    return event;
  }

  it('live, drained from the queue, and caught up per device', async () => {
    const s = stack();
    const tenant = await newTenant(s);
    const [live, drained, device] = recipients(3) as [string, string, string];
    const socket = await connect(s, { apiKey: tenant.key.key, recipient: live, v1: true });
    await send(tenant, 'frames.plain', [live, drained, device]);
    const expected = { topic: 'frames.plain', payload: { hello: 'frames.plain' } };
    expect(await oneEvent(socket, 'the live copy')).toMatchObject(expected);
    await socket.close();

    // Offline at the send: the queue's drain to a socket without a device.
    const later = await connect(s, { apiKey: tenant.key.key, recipient: drained, v1: true });
    expect(await oneEvent(later, 'the queued copy')).toMatchObject(expected);
    await later.close();

    // Each device catches up from its own position: the laptop after the phone proved it.
    const phone = await v1Socket(s, tenant.key, device, { device: 'phone' });
    const first = await oneEvent(phone, 'the copy on the phone');
    expect(first).toMatchObject(expected);
    await phone.close();
    const laptop = await v1Socket(s, tenant.key, device, { device: 'laptop' });
    expect(await oneEvent(laptop, 'the copy on the laptop')).toMatchObject({
      ...expected,
      id: first?.id,
    });
    await laptop.close();
  });

  it("from the inbox store, to an inbox key's device that connects after another had it live", async () => {
    const s = stack();
    const tenant = await inboxTenant(s);
    const [member] = recipients(1) as [string];
    const phone = await v1Socket(s, tenant.key, member, { device: 'phone' });
    await send(tenant, 'frames.inbox', [member]);
    const expected = { topic: 'frames.inbox', payload: { hello: 'frames.inbox' } };
    const live = await oneEvent(phone, 'the live copy on the phone');
    expect(live).toMatchObject(expected);
    await phone.close();
    // A live copy of an inbox key is kept by the inbox store, not queued: the laptop's copy comes
    // from the store's catch-up.
    const laptop = await v1Socket(s, tenant.key, member, { device: 'laptop' });
    expect(await oneEvent(laptop, 'the stored copy on the laptop')).toMatchObject({
      ...expected,
      id: live?.id,
    });
    await laptop.close();
  });
});
