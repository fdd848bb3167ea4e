import { subjects } from '@herald/proto';
import { type KeyObject, post } from '@herald/testkit';
import { type NatsConnection, connect as natsConnect } from 'nats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  connect,
  eventually,
  notify,
  recipient,
  runRetentionOnce,
  type Tenant,
  useStack,
} from './fixtures.js';

/** A small inbox per recipient, so the cap's 507 is reachable over HTTP. */
const CAP = 5;

/**
 * Inbox mode end to end (issue 32 item 2): a key created with --inbox-days keeps every event it
 * sends, live ones included, in the status service's inbox store before ingress answers; servers
 * read and mark it with POST /inbox/history and /inbox/read. A plain key stores nothing.
 */
describe('inbox mode over HTTP', () => {
  const stack = useStack({
    services: ['auth', 'ingress-api', 'socket-edge', 'status'],
    env: { status: { INBOX_MAX_PER_RECIPIENT: String(CAP) } },
  });
  let nc: NatsConnection;
  let account: string;
  let inboxKey: KeyObject;
  let plainKey: KeyObject;
  let inbox: Tenant;
  let plain: Tenant;
  beforeAll(async () => {
    const s = stack();
    nc = await natsConnect(s.nats.connectOptions());
    // One account, two Live keys side by side: one in inbox mode, one plain.
    account = (await s.createAccount({ plan: 'hobby' })).id;
    inboxKey = await s.createKey({ account, kind: 'live', client: 'mobile', inboxDays: 30 });
    plainKey = await s.createKey({ account, kind: 'live', client: 'mobile' });
    inbox = { account, key: inboxKey };
    plain = { account, key: plainKey };
  });
  afterAll(async () => {
    await nc?.close();
  });

  const history = (key: KeyObject, to: string, extra: Record<string, unknown> = {}) =>
    post(
      stack().baseUrl,
      stack().ca,
      { api_key: key.key, recipient: to, ...extra },
      { path: '/inbox/history' },
    );
  const read = (key: KeyObject, to: string, extra: Record<string, unknown>) =>
    post(
      stack().baseUrl,
      stack().ca,
      { api_key: key.key, recipient: to, ...extra },
      { path: '/inbox/read' },
    );
  /** What the store holds for a recipient of an account, asked on NATS as the operator. */
  async function stored(acct: string, to: string): Promise<string[]> {
    const msg = await nc.request(
      subjects.inboxQuery(acct),
      JSON.stringify({ v: 1, op: 'history', recipient: to, before: null, limit: 100 }),
      { timeout: 10_000 },
    );
    const reply = JSON.parse(new TextDecoder().decode(msg.data));
    return reply.events.map((e: { id: string }) => e.id);
  }

  it('keeps a live and a queued event of an inbox key, and nothing of a plain key', async () => {
    const s = stack();
    const online = recipient();
    const offline = recipient();
    const socket = await connect(s, { apiKey: plainKey.key, recipient: online });
    const live = await notify(s, inbox, online, { n: 'live' });
    expect(live.status).toBe(200);
    const queued = await notify(s, inbox, offline, { n: 'queued' });
    expect(queued.status).toBe(202);
    const plainLive = await notify(s, plain, online, { n: 'plain' });
    expect(plainLive.status).toBe(200);
    const frames = await socket.waitForFrames(2);
    expect(frames.map((f) => f.text)).toEqual(['{"n":"live"}', '{"n":"plain"}']);

    const page = await history(inboxKey, online);
    expect(page.status).toBe(200);
    expect(page.body).toEqual({
      events: [{ id: live.body.id, ts: expect.any(Number), payload: { n: 'live' }, read: false }],
      next: null,
    });
    expect((await history(inboxKey, offline)).body.events.map((e: { id: string }) => e.id)).toEqual(
      [queued.body.id],
    );
    // The plain key's event, delivered live, was never stored; its key cannot read an inbox.
    expect(await stored(account, online)).toEqual([live.body.id]);
    const refused = await history(plainKey, online);
    expect(refused.status).toBe(403);
    expect(refused.body.error).toMatchObject({ code: 'inbox_disabled', field: 'api_key' });
  });

  it('pages newest first across a page boundary and marks read by ids and all', async () => {
    const s = stack();
    const to = recipient();
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push((await notify(s, inbox, to, { i })).body.id);
    const first = await history(inboxKey, to, { limit: 2 });
    expect(first.body.events.map((e: { id: string }) => e.id)).toEqual([ids[4], ids[3]]);
    // An event arriving between pages never shifts the next one.
    await notify(s, inbox, recipient(), { elsewhere: true });
    const second = await history(inboxKey, to, { limit: 2, before: first.body.next });
    expect(second.body.events.map((e: { id: string }) => e.id)).toEqual([ids[2], ids[1]]);
    const last = await history(inboxKey, to, { limit: 2, before: second.body.next });
    expect(last.body).toMatchObject({ next: null });
    expect(last.body.events.map((e: { id: string }) => e.id)).toEqual([ids[0]]);

    expect((await read(inboxKey, to, { ids: [ids[0], ids[1]] })).body).toEqual({ unread: 3 });
    const marked = await history(inboxKey, to);
    expect(marked.body.events.map((e: { read: boolean }) => e.read)).toEqual([
      false,
      false,
      false,
      true,
      true,
    ]);
    expect((await read(inboxKey, to, { all: true })).body).toEqual({ unread: 0 });
  });

  it('answers 507 inbox_full past the cap when nothing is read, and stores the event once read', async () => {
    const s = stack();
    const to = recipient();
    for (let i = 0; i < CAP; i++) expect((await notify(s, inbox, to, { i })).status).toBe(202);
    const full = await notify(s, inbox, to, { i: CAP });
    expect(full.status).toBe(507);
    expect(full.body.error).toMatchObject({ code: 'inbox_full', field: 'recipient' });
    expect((await history(inboxKey, to)).body.events).toHaveLength(CAP);
    // A batch: the full recipient's item alone is refused; another recipient's item is kept.
    const other = recipient();
    const batch = await post(
      s.baseUrl,
      s.ca,
      {
        api_key: inboxKey.key,
        client: 'mobile',
        events: [
          { recipient: to, payload: { b: 1 } },
          { recipient: other, payload: { b: 2 } },
        ],
      },
      { path: '/notify/batch' },
    );
    expect(batch.status).toBe(200);
    const [refusedItem, keptItem] = batch.body.results;
    expect(refusedItem).toMatchObject({ http_status: 507, error: { code: 'inbox_full' } });
    expect(keptItem).toMatchObject({ http_status: 202, id: expect.any(String) });
    expect(await stored(account, other)).toEqual([keptItem.id]);
    // Once one is read, the oldest read one makes room.
    const oldest = (await history(inboxKey, to)).body.events.at(-1).id;
    await read(inboxKey, to, { ids: [oldest] });
    expect((await notify(s, inbox, to, { i: 'room' })).status).toBe(202);
    expect(await stored(account, to)).not.toContain(oldest);
  });

  it('keeps a NATS dispatch of an inbox key too', async () => {
    const to = recipient();
    const msg = await nc.request(
      subjects.dispatch(account),
      JSON.stringify({
        recipient: to,
        payload: { via: 'nats' },
        api_key: inboxKey.key,
        client: 'mobile',
      }),
      { timeout: 10_000 },
    );
    const reply = JSON.parse(new TextDecoder().decode(msg.data));
    expect(reply.http_status).toBe(202);
    expect(await stored(account, to)).toEqual([reply.id]);
  });

  it("never lets another account's key read an inbox or its counts", async () => {
    const s = stack();
    const to = recipient();
    await notify(s, inbox, to, { secret: true });
    const otherAccount = (await s.createAccount({ plan: 'hobby' })).id;
    const otherKey = await s.createKey({
      account: otherAccount,
      kind: 'live',
      client: 'mobile',
      inboxDays: 30,
    });
    const page = await history(otherKey, to);
    expect(page.status).toBe(200);
    expect(page.body).toEqual({ events: [], next: null });
    expect((await read(otherKey, to, { all: true })).body).toEqual({ unread: 0 });
    // The owner's count is untouched.
    expect((await read(inboxKey, to, { ids: ['none'] })).body).toEqual({ unread: 1 });
  });

  it('refuses bad requests naming the field, and a subscribe key', async () => {
    const s = stack();
    const bad = await history(inboxKey, 'not-a-uuid');
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatchObject({ code: 'invalid_field', field: 'recipient' });
    const limit = await history(inboxKey, recipient(), { limit: 101 });
    expect(limit.body.error).toMatchObject({ code: 'invalid_field', field: 'limit' });
    const neither = await read(inboxKey, recipient(), {});
    expect(neither.body.error).toMatchObject({ code: 'invalid_field', field: 'ids' });
    const sub = await s.createKey({
      account,
      kind: 'live',
      client: 'mobile',
      scope: 'subscribe',
      inboxDays: 7,
    });
    const denied = await history(sub, recipient());
    expect(denied.status).toBe(403);
    expect(denied.body.error).toMatchObject({ code: 'scope_denied' });
    // A web key is held to its Origin, as on /notify; `client`, when sent, to the key's. (Made
    // with the opt-out: a web inbox key otherwise requires tokens, and is refused here.)
    const web = await s.createKey({
      account,
      kind: 'live',
      client: 'web',
      domain: 'https://app.example.com',
      inboxDays: 7,
      allowUnsignedRecipients: true,
    });
    const body = { api_key: web.key, recipient: recipient() };
    const noOrigin = await post(s.baseUrl, s.ca, body, { path: '/inbox/history' });
    expect(noOrigin.status).toBe(403);
    expect(noOrigin.body.error).toMatchObject({ field: 'Origin' });
    const origin = { path: '/inbox/history', headers: { origin: 'https://app.example.com' } };
    expect((await post(s.baseUrl, s.ca, body, origin)).status).toBe(200);
    const wrongClient = await post(s.baseUrl, s.ca, { ...body, client: 'mobile' }, origin);
    expect(wrongClient.body.error).toMatchObject({ code: 'client_mismatch', field: 'client' });
  });

  it("removes expired inbox events in retention's weekly run once delivered, never before", async () => {
    const s = stack();
    const to = recipient();
    // Kept one day, three days ago (as ingress would have stored them then): both past expiry.
    const old = Date.now() - 3 * 24 * 3600_000;
    const store = await nc.request(
      subjects.inboxStore(account),
      JSON.stringify({
        v: 1,
        key_id: inboxKey.id,
        days: 1,
        events: ['had', 'never-had'].map((id) => ({
          recipient: to,
          id,
          ts: old,
          payload_json: '{}',
        })),
      }),
      { timeout: 10_000 },
    );
    expect(JSON.parse(new TextDecoder().decode(store.data)).ok).toBe(true);
    // A socket had one of them (its `sent` record); the other was never delivered.
    nc.publish(
      subjects.status(account),
      JSON.stringify({ v: 1, id: 'had', account_id: account, status: 'sent', at: Date.now() }),
    );
    // The status writer settles the row within its batch wait; run the weekly pass until it has.
    await eventually(
      async () => {
        expect(await runRetentionOnce(s)).toMatchObject({ outcome: 'completed' });
        return (await stored(account, to)).length === 1;
      },
      'the delivered expired event removed',
      30_000,
    );
    expect(await stored(account, to)).toEqual(['never-had']);
  });

  it('answers 503 and accepts nothing while the store is down; a plain key does not need it', async () => {
    const s = stack();
    const to = recipient();
    await s.stopService('status');
    try {
      const down = await notify(s, inbox, to, { lost: false });
      expect(down.status).toBe(503);
      expect(down.body.error).toMatchObject({ code: 'unavailable' });
      expect((await notify(s, plain, to, { plain: true })).status).toBe(202);
    } finally {
      await s.startService('status');
    }
    expect(await stored(account, to)).toEqual([]);
  });
});
