import { PushMessage } from '@herald/proto';
import { PushService } from '@herald/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ask, type PushFixture, startPushFixture, subscribed } from './push-support.js';
import { type InboxFixture, startInboxFixture, uuid } from './support.js';

let p: PushFixture;
beforeAll(async () => {
  p = await startPushFixture({ PUSH_SUBSCRIPTIONS_PER_RECIPIENT_MAX: '20' });
});
afterAll(async () => {
  await p?.close();
});

const sub = (account: string, recipient: string, subscription = p.push.subscribe()) =>
  ask(p.ingress, {
    op: 'subscribe',
    account_id: account,
    key_id: 'key-1',
    recipient,
    kind: 'webpush',
    subscription,
  });

describe('PUSH_API_SUBJECT', () => {
  it('configures a VAPID key pair (the private key sealed), answers its public key and status', async () => {
    const account = uuid();
    const none = await ask(p.auth, { op: 'vapid-public-key', account_id: account });
    expect(none).toMatchObject({ ok: false, error: { code: 'not_found' } });
    const c = await ask(p.auth, {
      op: 'configure-vapid',
      account_id: account,
      subject: 'https://example.com/contact',
    });
    expect(c).toMatchObject({ ok: true, subject: 'https://example.com/contact' });
    expect(Buffer.from(c.public_key, 'base64url')).toHaveLength(65);
    const k = await ask(p.ingress, { op: 'vapid-public-key', account_id: account });
    expect(k).toMatchObject({ ok: true, public_key: c.public_key });
    const row = await p.f.db
      .selectFrom('push_credentials')
      .selectAll()
      .where('account_id', '=', account)
      .executeTakeFirstOrThrow();
    expect(row.vapid_private_sealed).not.toMatch(/^[A-Za-z0-9_-]{43}$/);
    const st = await ask(p.auth, { op: 'status', account_id: account });
    expect(st.credentials).toEqual({
      webpush: {
        configured: true,
        public_key: c.public_key,
        subject: 'https://example.com/contact',
      },
      fcm: { configured: false, project_id: null, client_email: null },
      apns: { configured: false, key_id: null, team_id: null, topic: null, sandbox: null },
      subscriptions: 0,
    });
    // The default subject is PUSH_VAPID_SUBJECT; a subject that is no contact URI is refused.
    const d = await ask(p.auth, { op: 'configure-vapid', account_id: account });
    expect(d).toMatchObject({ ok: true, subject: 'mailto:ops@herald.test' });
    expect(d.public_key).not.toBe(c.public_key);
    const bad = await ask(p.auth, { op: 'configure-vapid', account_id: account, subject: 'ops' });
    expect(bad).toMatchObject({ ok: false, error: { code: 'invalid_field', field: 'subject' } });
  });

  it('subscribe is idempotent per endpoint: the same id, created false', async () => {
    const [account, recipient] = [uuid(), uuid()];
    const s = p.push.subscribe();
    const a = await sub(account, recipient, s);
    const b = await sub(account, recipient, s);
    expect(a).toMatchObject({ ok: true, created: true });
    expect(b).toEqual({ v: 1, ok: true, id: a.id, created: false });
    const l = await ask(p.auth, { op: 'list', account_id: account });
    expect(l.subscriptions).toHaveLength(1);
    expect(l.subscriptions[0]).toMatchObject({
      id: a.id,
      recipient,
      kind: 'webpush',
      endpoint_origin: p.push.origin,
    });
    expect(JSON.stringify(l)).not.toContain(s.keys.auth);
  });

  it('keeps PUSH_SUBSCRIPTIONS_PER_RECIPIENT_MAX (20): the 21st replaces the oldest', async () => {
    const [account, recipient] = [uuid(), uuid()];
    const ids: string[] = [];
    for (let i = 0; i < 20; i++) {
      const r = await sub(account, recipient);
      expect(r.ok).toBe(true);
      ids.push(r.id);
    }
    const listed = async () =>
      (await ask(p.auth, { op: 'list', account_id: account, recipient })).subscriptions.map(
        (s: { id: string }) => s.id,
      );
    expect(await listed()).toEqual(ids);
    const last = await sub(account, recipient);
    expect(last).toMatchObject({ ok: true, created: true });
    expect(await listed()).toEqual([...ids.slice(1), last.id]);
  });

  it('isolates accounts: another account neither lists, deletes nor tests a subscription; nor does another recipient delete it', async () => {
    const [a, b, recipient] = [uuid(), uuid(), uuid()];
    const { id } = await subscribed(p, a, recipient);
    expect((await ask(p.auth, { op: 'list', account_id: b })).subscriptions).toEqual([]);
    const other = await ask(p.ingress, { op: 'unsubscribe', account_id: b, id });
    expect(other).toMatchObject({ ok: false, error: { code: 'not_found', field: 'id' } });
    const wrong = await ask(p.ingress, { op: 'unsubscribe', account_id: a, id, recipient: uuid() });
    expect(wrong).toMatchObject({ ok: false, error: { code: 'not_found' } });
    const t = await ask(p.auth, { op: 'test', account_id: b, id });
    expect(t).toMatchObject({ ok: false, error: { code: 'not_found' } });
    expect((await ask(p.auth, { op: 'list', account_id: a })).subscriptions).toHaveLength(1);
    const mine = await ask(p.ingress, { op: 'unsubscribe', account_id: a, id, recipient });
    expect(mine).toMatchObject({ ok: true, subscription: { id, recipient } });
    expect((await ask(p.auth, { op: 'list', account_id: a })).subscriptions).toEqual([]);
  });

  it('test sends a push now and answers what the push service said; a 410 deletes the subscription', async () => {
    const [account, recipient] = [uuid(), uuid()];
    const { id, sub: s } = await subscribed(p, account, recipient);
    const t = await ask(p.auth, { op: 'test', account_id: account, id });
    expect(t).toMatchObject({ ok: true, http_status: 201, error: null });
    expect(t.latency_ms).toBeGreaterThanOrEqual(0);
    const [arrival] = p.push.arrivals(s.endpoint);
    expect(arrival?.error).toBeNull();
    expect(PushMessage.parse(arrival?.message)).toMatchObject({
      title: 'Test notification',
      count: 1,
    });
    p.push.answer(s.endpoint, 410);
    const gone = await ask(p.auth, { op: 'test', account_id: account, id });
    expect(gone).toMatchObject({ ok: true, http_status: 410 });
    expect((await ask(p.auth, { op: 'list', account_id: account })).subscriptions).toEqual([]);
  });

  it('refuses a request that is not a PushRequest, naming the field', async () => {
    const r = await ask(p.ingress, {
      op: 'subscribe',
      account_id: uuid(),
      key_id: 'k',
      recipient: 'r',
      kind: 'webpush',
      subscription: { endpoint: p.push.subscribe().endpoint, keys: { p256dh: 'x', auth: 'y' } },
    });
    expect(r).toMatchObject({ ok: false, error: { code: 'invalid_field' } });
    expect(r.error.message).toContain('p256dh');
  });
});

describe('PUSH_API_SUBJECT without WEBHOOK_SECRET_KEY nor PUSH_ALLOW_PRIVATE', () => {
  let f: InboxFixture;
  let push: PushService;
  beforeAll(async () => {
    push = await PushService.start();
    f = await startInboxFixture({ PUSH_VAPID_SUBJECT: 'mailto:ops@herald.test' });
  });
  afterAll(async () => {
    await f?.close();
    await push?.stop();
  });

  it('refuses configure, naming WEBHOOK_SECRET_KEY, and a private endpoint, naming PUSH_ALLOW_PRIVATE', async () => {
    const auth = await f.client('auth');
    const c = await ask(auth, { op: 'configure-vapid', account_id: uuid() });
    expect(c).toMatchObject({ ok: false, error: { code: 'unavailable' } });
    expect(c.error.message).toContain('WEBHOOK_SECRET_KEY');
    const s = await ask(auth, {
      op: 'subscribe',
      account_id: uuid(),
      key_id: 'k',
      recipient: 'r',
      kind: 'webpush',
      subscription: push.subscribe(),
    });
    expect(s).toMatchObject({
      ok: false,
      error: { code: 'invalid_field', field: 'subscription.endpoint' },
    });
    expect(s.error.message).toContain('PUSH_ALLOW_PRIVATE');
    const plain = await ask(auth, {
      op: 'subscribe',
      account_id: uuid(),
      key_id: 'k',
      recipient: 'r',
      kind: 'webpush',
      subscription: { ...push.subscribe(), endpoint: 'http://push.example.com/x' },
    });
    expect(plain.error.message).toContain('https');
  });
});
