import { headers, connect as natsConnect } from 'nats';
import { describe, expect, it } from 'vitest';
import { allDelivered, connect, eventually, notify, recipient, useStack } from './fixtures.js';
import {
  ask,
  framesOf,
  idsOf,
  inboxTenant,
  startSecondEdge,
  twoKeys,
  unreadIs,
  v1Socket,
} from './inbox-fixtures.js';

/**
 * Issue 32 item 2, the socket side of inbox mode, through the whole path (auth, ingress, the edge,
 * the status service's inbox store; real nats-server, Postgres and sockets): the unread count on
 * connect and after every change on every edge, read and history in-band, and each device's
 * catch-up of the inbox from its own position, live events included.
 */
describe('inbox mode on sockets, end to end', () => {
  // A socket may hold 6 events unproven (the catch-up writes while at most 3 are), and the
  // catch-up asks the store for 2 at a time: a catch-up of 8 events is several requests and stalls
  // on a client that does not ack, which is how a disconnect lands in its middle.
  const stack = useStack({
    services: ['auth', 'ingress-api', 'socket-edge', 'status'],
    env: { 'socket-edge': { MAX_UNPROVEN_EVENTS: '6', INBOX_CATCH_UP_BATCH: '2' } },
  });

  for (const devices of [2, 3, 10]) {
    it(`gives each of ${devices} devices the event queued while all were offline, once, in order with live`, async () => {
      const s = stack();
      const tenant = await inboxTenant(s);
      const to = recipient();
      const queued = await notify(s, tenant, to, { queued: true });
      expect(queued.status).toBe(202);
      const sockets = await Promise.all(
        Array.from({ length: devices }, (_, n) => v1Socket(s, tenant.key, to, { device: `d${n}` })),
      );
      for (const socket of sockets) {
        await eventually(() => idsOf(socket).length >= 1, 'the queued event');
        await unreadIs(socket, 1, 'on connect');
      }
      await allDelivered(s, tenant.key.key, [queued.body.id]);
      // A live marker: whatever the edge had to write before it (a second copy) arrived first.
      const marker = await notify(s, tenant, to, 'marker');
      expect(marker.status).toBe(200);
      for (const socket of sockets) {
        await eventually(() => idsOf(socket).includes(marker.body.id), 'the marker');
        expect(idsOf(socket)).toEqual([queued.body.id, marker.body.id]);
      }
      await Promise.all(sockets.map((socket) => socket.close()));
    });
  }

  it('gives a device that connects later the live event another device had, and never one again what it proved', async () => {
    const s = stack();
    const tenant = await inboxTenant(s);
    const to = recipient();
    const phone = await v1Socket(s, tenant.key, to, { device: 'phone' });
    const live = await notify(s, tenant, to, { live: 1 });
    expect(live.status).toBe(200);
    await eventually(() => idsOf(phone).length === 1, 'the live event on the phone');
    await phone.close();

    const laptop = await v1Socket(s, tenant.key, to, { device: 'laptop' });
    await eventually(() => idsOf(laptop).length === 1, 'the live event on the laptop');
    expect(laptop.events()[0]).toMatchObject({ id: live.body.id, payload: { live: 1 } });

    const back = await v1Socket(s, tenant.key, to, { device: 'phone' });
    const marker = await notify(s, tenant, to, 'marker');
    await eventually(() => idsOf(back).includes(marker.body.id), 'the marker on the phone');
    await eventually(() => idsOf(laptop).includes(marker.body.id), 'the marker on the laptop');
    expect(idsOf(back)).toEqual([marker.body.id]);
    expect(idsOf(laptop)).toEqual([live.body.id, marker.body.id]);
    await Promise.all([back.close(), laptop.close()]);
  });

  it('gives a device that left in the middle of its catch-up the rest next time, not what it proved', async () => {
    const s = stack();
    const tenant = await inboxTenant(s);
    const to = recipient();
    const ids: string[] = [];
    for (let n = 0; n < 8; n++) ids.push((await notify(s, tenant, to, { n })).body.id);
    const tablet = await v1Socket(s, tenant.key, to, { device: 'tablet', autoAck: false });
    // The catch-up stalls with 3 unproven; two acks let it write two more, in order.
    await eventually(() => idsOf(tablet).length >= 3, 'the first three');
    expect(idsOf(tablet)).toEqual(ids.slice(0, 3));
    tablet.ack(ids[0] as string);
    tablet.ack(ids[1] as string);
    await eventually(() => idsOf(tablet).length >= 5, 'two more after two acks');
    expect(idsOf(tablet)).toEqual(ids.slice(0, 5));
    await tablet.close();

    const again = await v1Socket(s, tenant.key, to, { device: 'tablet' });
    await eventually(() => idsOf(again).length >= 6, 'the rest');
    const marker = await notify(s, tenant, to, 'marker');
    await eventually(() => idsOf(again).includes(marker.body.id), 'the marker');
    expect(idsOf(again)).toEqual([...ids.slice(2), marker.body.id]);
    await again.close();
  });

  it('gives a live event that comes during a catch-up after the older ones, once', async () => {
    const s = stack();
    const tenant = await inboxTenant(s);
    const to = recipient();
    const ids: string[] = [];
    for (let n = 0; n < 5; n++) ids.push((await notify(s, tenant, to, { n })).body.id);
    const tv = await v1Socket(s, tenant.key, to, { device: 'tv', autoAck: false });
    await eventually(() => idsOf(tv).length >= 3, 'the catch-up stalls at three unproven');
    // Sent while the catch-up waits: answered 200 once proven, or 202 and queued when the sender
    // gave up first; either way the device gets it once, after the five.
    const live = notify(s, tenant, to, { live: true });
    const acked = new Set<string>();
    await eventually(() => {
      for (const id of idsOf(tv)) if (!acked.has(id) && acked.add(id)) tv.ack(id);
      return idsOf(tv).length >= 6;
    }, 'the rest and the live one');
    const answer = await live;
    expect([200, 202]).toContain(answer.status);
    const marker = await notify(s, tenant, to, 'marker');
    await eventually(() => {
      for (const id of idsOf(tv)) if (!acked.has(id) && acked.add(id)) tv.ack(id);
      return idsOf(tv).includes(marker.body.id);
    }, 'the marker');
    expect(idsOf(tv)).toEqual([...ids, answer.body.id, marker.body.id]);
    await tv.close();
  });

  it('gives a device id whose inbox position expired every event the inbox still keeps, in order', async () => {
    const s = stack();
    const tenant = await inboxTenant(s);
    const to = recipient();
    const ids: string[] = [];
    for (let n = 0; n < 3; n++) ids.push((await notify(s, tenant, to, { n })).body.id);
    const watch = await v1Socket(s, tenant.key, to, { device: 'watch' });
    await eventually(() => idsOf(watch).length === 3, 'three events');
    await watch.close();
    // A week and more later the position is gone: DEVICE_POSITION_TTL_DAYS ends it as this does.
    const nc = await natsConnect(s.nats.connectOptions());
    const h = headers();
    h.set('KV-Operation', 'PURGE');
    h.set('Nats-Rollup', 'sub');
    const key = `inbox.${tenant.account}.${to}.watch`;
    await nc.request(`$KV.herald_device_positions.${key}`, new Uint8Array(0), {
      headers: h,
      timeout: 5000,
    });
    await nc.close();
    const reused = await v1Socket(s, tenant.key, to, { device: 'watch' });
    await eventually(() => idsOf(reused).length >= 3, 'the kept events again');
    const marker = await notify(s, tenant, to, 'marker');
    await eventually(() => idsOf(reused).includes(marker.body.id), 'the marker');
    expect(idsOf(reused)).toEqual([...ids, marker.body.id]);
    await reused.close();
  });

  it('clears the badge of a socket on another edge when a socket reads, within the wait', async () => {
    const s = stack();
    const second = await startSecondEdge(s);
    try {
      const tenant = await inboxTenant(s);
      const to = recipient();
      const here = await v1Socket(s, tenant.key, to);
      const there = await v1Socket(s, tenant.key, to, { wsUrl: second.wsUrl });
      await unreadIs(there, 0, 'on connect');
      const first = await notify(s, tenant, to, { n: 1 });
      await notify(s, tenant, to, { n: 2 });
      await unreadIs(here, 2, 'two new, this edge');
      await unreadIs(there, 2, 'two new, the other edge');
      here.ws.send(JSON.stringify({ type: 'read', ids: [first.body.id], ref: 'mark-1' }));
      await unreadIs(there, 1, 'one read on the other edge');
      // The read's answer carries its ref; the same change reaches the other socket as a notice.
      await eventually(
        () => framesOf(here, 'inbox').some((f) => f.ref === 'mark-1'),
        "the read's answer, with its ref",
      );
      expect(framesOf(here, 'inbox').find((f) => f.ref === 'mark-1')?.unread).toBe(1);
      expect(framesOf(there, 'inbox').every((f) => f.ref === undefined)).toBe(true);
      there.ws.send(JSON.stringify({ type: 'read', all: true }));
      await unreadIs(here, 0, 'all read on the other edge');
      await unreadIs(there, 0, 'all read here');
      await Promise.all([here.close(), there.close()]);
    } finally {
      await second.proc.stop();
    }
  });

  it('pages history newest first by cursor while new events arrive, with read state', async () => {
    const s = stack();
    const tenant = await inboxTenant(s);
    const to = recipient();
    const ids: string[] = [];
    for (let n = 0; n < 5; n++) ids.push((await notify(s, tenant, to, { n })).body.id);
    const reader = await v1Socket(s, tenant.key, to);
    await unreadIs(reader, 5, 'on connect');
    const page1 = await ask(reader, { type: 'history', before: null, limit: 2 }, 'history');
    expect((page1.events as { id: string }[]).map((e) => e.id)).toEqual([ids[4], ids[3]]);
    // Two more arrive while the first page is being read; one of the older ones is read.
    const later = [
      (await notify(s, tenant, to, { n: 5 })).body.id,
      (await notify(s, tenant, to, { n: 6 })).body.id,
    ];
    reader.ws.send(JSON.stringify({ type: 'read', ids: [ids[2]] }));
    await unreadIs(reader, 6, 'seven kept, one read');
    const page2 = await ask(
      reader,
      { type: 'history', before: page1.next, limit: 2, ref: 'p2' },
      'history',
    );
    expect(page2.ref, 'the page carries its request ref').toBe('p2');
    expect(page2.events).toEqual([
      expect.objectContaining({ id: ids[2], payload: { n: 2 }, read: true }),
      expect.objectContaining({ id: ids[1], payload: { n: 1 }, read: false }),
    ]);
    const page3 = await ask(reader, { type: 'history', before: page2.next, limit: 2 }, 'history');
    expect((page3.events as { id: string }[]).map((e) => e.id)).toEqual([ids[0]]);
    expect(page3.next).toBeNull();
    const top = await ask(reader, { type: 'history', before: null, limit: 2 }, 'history');
    expect((top.events as { id: string }[]).map((e) => e.id)).toEqual([later[1], later[0]]);
    // A bad request is answered in-band, naming the field, and the socket stays open.
    const bad = await ask(reader, { type: 'history', before: null, limit: 101 }, 'error');
    expect(bad.error).toMatchObject({ code: 'invalid_field', field: 'limit' });
    const still = await ask(reader, { type: 'history', before: null, limit: 1 }, 'history');
    expect((still.events as { id: string }[]).map((e) => e.id)).toEqual([later[1]]);
    await reader.close();
  });

  it('keeps a plain key as it was beside an inbox key: no inbox frames, nothing live stored', async () => {
    const s = stack();
    const keys = await twoKeys(s);
    const plain = { account: keys.account, key: keys.plain };
    const inbox = { account: keys.account, key: keys.inbox };
    const to = recipient();
    const plainSocket = await v1Socket(s, plain.key, to);
    const inboxSocket = await v1Socket(s, inbox.key, to);
    await unreadIs(inboxSocket, 0, 'on connect');
    const fromPlain = await notify(s, plain, to, { key: 'plain' });
    expect(fromPlain.status).toBe(200);
    const fromInbox = await notify(s, inbox, to, { key: 'inbox' });
    expect(fromInbox.status).toBe(200);
    await unreadIs(inboxSocket, 1, 'the inbox key event only');
    for (const socket of [plainSocket, inboxSocket])
      await eventually(() => idsOf(socket).length === 2, 'both events live on both sockets');
    const page = await ask(inboxSocket, { type: 'history', before: null, limit: 10 }, 'history');
    expect((page.events as { id: string }[]).map((e) => e.id)).toEqual([fromInbox.body.id]);
    const refused = await ask(plainSocket, { type: 'history', before: null, limit: 10 }, 'error');
    expect(refused.error).toMatchObject({ code: 'inbox_disabled', field: 'type' });
    expect(framesOf(plainSocket, 'inbox')).toEqual([]);
    await Promise.all([plainSocket.close(), inboxSocket.close()]);
  });

  it("shows no other account's inbox or count to a socket of the same recipient id", async () => {
    const s = stack();
    const a = await inboxTenant(s);
    const b = await inboxTenant(s);
    const to = recipient();
    const mine = await v1Socket(s, a.key, to);
    const theirs = await v1Socket(s, b.key, to);
    await unreadIs(theirs, 0, 'on connect');
    const sent = await notify(s, a, to, { secret: 1 });
    expect(sent.status).toBe(200);
    await unreadIs(mine, 1, "the sender's account");
    const page = await ask(theirs, { type: 'history', before: null, limit: 10 }, 'history');
    expect(page.events).toEqual([]);
    theirs.ws.send(JSON.stringify({ type: 'read', all: true }));
    await eventually(() => framesOf(theirs, 'inbox').length >= 2, 'the answer to its own read');
    expect(framesOf(theirs, 'inbox').every((f) => f.unread === 0)).toBe(true);
    // A marker to the other account: what reached its socket by then is all it will get.
    const marker = await notify(s, b, to, 'marker');
    await eventually(() => idsOf(theirs).includes(marker.body.id), 'the marker');
    expect(idsOf(theirs)).toEqual([marker.body.id]);
    await unreadIs(theirs, 1, 'its own event');
    expect(framesOf(mine, 'inbox').at(-1)?.unread).toBe(1);
    await Promise.all([mine.close(), theirs.close()]);
  });

  it('gives a plain-framing socket of an inbox key its events as today and no inbox frames', async () => {
    const s = stack();
    const tenant = await inboxTenant(s);
    const to = recipient();
    const plain = await connect(s, { apiKey: tenant.key.key, recipient: to });
    const v1 = await v1Socket(s, tenant.key, to);
    const sent = await notify(s, tenant, to, { n: 1 });
    expect(sent.status).toBe(200);
    await unreadIs(v1, 1, 'the v1 socket counts it');
    await plain.waitForFrames(1);
    v1.ws.send(JSON.stringify({ type: 'read', all: true }));
    await unreadIs(v1, 0, 'read');
    // A marker after the read's notice: the plain socket got only events.
    const marker = await notify(s, tenant, to, 'marker');
    expect(marker.status).toBe(200);
    await plain.waitForFrames(2);
    expect(plain.frames.map((f) => f.text)).toEqual(['{"n":1}', '"marker"']);
    await Promise.all([plain.close(), v1.close()]);
  });
});
