import { randomUUID } from 'node:crypto';
import { DispatchStatus, Herald, type HeraldEvent, type Subscription } from '@herald/sdk';
import { type KeyObject, type Stack, startStack } from '@herald/testkit';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { eventually, type Runtime } from './context.js';
import { tlsRuntime } from './tls-runtime.js';

/**
 * Inbox mode through the built SDK in Node against the real stack (nats-server, Postgres, auth,
 * ingress-api, socket-edge, status): two devices of one recipient on a key made with
 * `--inbox-days`, and a plain key beside it.
 */
describe('@herald/sdk inbox mode against the real stack', () => {
  let stack: Stack;
  let inboxKey: KeyObject;
  let plainKey: KeyObject;
  const runtimes: Runtime[] = [];
  const heralds: Herald[] = [];

  beforeAll(async () => {
    stack = await startStack({ services: ['auth', 'ingress-api', 'socket-edge', 'status'] });
    const { id } = await stack.createAccount();
    const args = ['key', 'create', '--account', id, '--kind', 'test', '--client', 'mobile'];
    inboxKey = (await stack.admin([...args, '--inbox-days', '7', '--json'])) as KeyObject;
    const other = await stack.createAccount();
    plainKey = await stack.createKey({ account: other.id, kind: 'test', client: 'mobile' });
  }, 120_000);
  afterEach(async () => {
    for (const h of heralds.splice(0)) h.disconnect();
    await Promise.all(runtimes.splice(0).map((rt) => rt.close()));
  });
  afterAll(async () => {
    await stack?.stop();
  });

  /** One device: its own Herald and device id. */
  const device = (key: KeyObject, device: string | false = randomUUID()) => {
    const rt = tlsRuntime(stack.ca);
    runtimes.push(rt);
    const h = new Herald({
      apiKey: key.key,
      client: 'mobile',
      baseUrl: stack.baseUrl,
      wsUrl: stack.wsUrl,
      WebSocket: rt.WebSocket,
      fetch: rt.fetch,
      backoff: { baseMs: 50, capMs: 400 },
      device,
    });
    heralds.push(h);
    return h;
  };
  const counts = (sub: Subscription) => {
    const seen: number[] = [];
    sub.onInbox((n) => seen.push(n));
    return seen;
  };
  const events = (sub: Subscription) => {
    const seen: HeraldEvent[] = [];
    sub.listen((_p, e) => seen.push(e));
    return seen;
  };

  it('two devices: both get what was queued, share one count, page history and clear each other', async () => {
    const to = randomUUID();
    const sender = device(inboxKey, false);
    const sent: string[] = [];
    for (const n of [1, 2, 3]) {
      const r = await sender.notify({ recipient: to, payload: { n } });
      expect(r.status).toBe(DispatchStatus.queued);
      sent.push(r.id ?? '');
    }
    const phone = device(inboxKey).subscribe(to);
    const laptop = device(inboxKey).subscribe(to);
    const [phoneCounts, laptopCounts] = [counts(phone), counts(laptop)];
    const [phoneEvents, laptopEvents] = [events(phone), events(laptop)];
    await eventually(() => phoneEvents.length === 3 && laptopEvents.length === 3, 'both caught up');
    expect(phoneEvents.map((e) => e.id)).toEqual(sent);
    expect(laptopEvents.map((e) => e.id)).toEqual(sent);
    await eventually(() => phone.unread() === 3 && laptop.unread() === 3, 'the count on both');

    const first = await phone.history({ limit: 2 });
    expect(first.events.map((e) => [e.id, e.payload, e.read])).toEqual([
      [sent[2], { n: 3 }, false],
      [sent[1], { n: 2 }, false],
    ]);
    expect(first.next).not.toBeNull();
    const last = await phone.history({ before: first.next, limit: 2 });
    expect(last).toEqual({ events: [expect.objectContaining({ id: sent[0] })], next: null });

    await expect(phone.markRead([sent[1] ?? ''])).resolves.toBe(2);
    await eventually(() => laptopCounts.at(-1) === 2, "the phone's read on the laptop");
    const marked = await laptop.history({ limit: 3 });
    expect(marked.events.map((e) => e.read)).toEqual([false, true, false]);
    await expect(laptop.markAllRead()).resolves.toBe(0);
    await eventually(() => phoneCounts.at(-1) === 0, "the laptop's read-all on the phone");

    // A live event: both get it, the count says 1 on both.
    const live = await sender.notify({ recipient: to, payload: { n: 4 } });
    expect(live.status).toBe(DispatchStatus.sent);
    await eventually(() => phoneEvents.length === 4 && laptopEvents.length === 4, 'the live one');
    await eventually(() => phone.unread() === 1 && laptop.unread() === 1, 'unread 1 on both');
  });

  it('requests made at once are answered in call order on one socket', async () => {
    const to = randomUUID();
    const sender = device(inboxKey, false);
    for (const n of [1, 2, 3, 4, 5]) await sender.notify({ recipient: to, payload: { n } });
    const sub = device(inboxKey).subscribe(to);
    await eventually(() => sub.unread() === 5, 'the count');
    const [a, read, b, all, c] = [
      sub.history({ limit: 1 }),
      sub.markRead(['no-such-id']),
      sub.history({ limit: 5 }),
      sub.markAllRead(),
      sub.history({ limit: 5 }),
    ];
    expect((await a).events.map((e) => e.payload)).toEqual([{ n: 5 }]);
    await expect(read).resolves.toBe(5);
    expect((await b).events).toHaveLength(5);
    await expect(all).resolves.toBe(0);
    expect((await c).events.every((e) => e.read)).toBe(true);
  });

  it('a plain key: no count, and the edge refuses history and reads in-band (inbox_disabled)', async () => {
    const to = randomUUID();
    const sub = device(plainKey).subscribe(to);
    await eventually(() => sub.connected(), 'connected');
    expect(sub.unread()).toBeUndefined();
    await expect(sub.history()).rejects.toMatchObject({ code: 'inbox_disabled' });
    await expect(sub.markAllRead()).rejects.toMatchObject({ code: 'inbox_disabled' });
    expect(sub.connected(), 'the socket stays open').toBe(true);
  });
});
