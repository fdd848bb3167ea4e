import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  errorReply,
  HeraldError,
  PUSH_API_SUBJECT,
  PushListReply,
  PushRequest,
  PushStatusReply,
  PushSubscriptionReply,
  type PushSubscriptionView,
  PushTestReply,
  PushVapidReply,
} from '@herald/proto';
import { connect, JSONCodec, type NatsConnection, type Subscription } from 'nats';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createAccount } from '../src/accounts.js';
import { type AccountApiStack, startAccountApi, type User } from './account-api-fixture.js';
import { inProcessAdmin, type Run } from './cli.js';
import { natsOf } from './servers.js';

/**
 * The push commands and routes (issue 40) forward to rt.pushapi.request. The status service's side
 * is built apart, so `answer` below stands in for it: a responder on a real nats-server, as the
 * status service's NATS user, answering each op with a reply the proto schema accepts and keeping
 * what it was asked. It is a test double of the status service, never of the broker.
 */

const codec = JSONCodec();
const PUBLIC_KEY = `B${'A'.repeat(86)}`;
const MISSING = 'sub-missing';
const RSA = generateKeyPairSync('rsa', { modulusLength: 2048 })
  .privateKey.export({ type: 'pkcs8', format: 'pem' })
  .toString();
const EC = generateKeyPairSync('ec', { namedCurve: 'P-256' })
  .privateKey.export({ type: 'pkcs8', format: 'pem' })
  .toString();
/** A Firebase service-account key file (the fields Herald uses, and some it ignores). */
const SA = {
  type: 'service_account',
  project_id: 'my-app',
  private_key_id: 'abc',
  private_key: RSA,
  client_email: 'push@my-app.iam.gserviceaccount.com',
  token_uri: 'https://oauth2.googleapis.com/token',
};
const files = mkdtempSync(join(tmpdir(), 'herald-push-cli-'));
const SA_FILE = join(files, 'sa.json');
const P8_FILE = join(files, 'AuthKey.p8');
writeFileSync(SA_FILE, JSON.stringify(SA));
writeFileSync(P8_FILE, EC);

let stack: AccountApiStack;
let statusNc: NatsConnection;
let responder: Subscription | undefined;
const asked: PushRequest[] = [];

function view(account: string, id: string, recipient = 'user-1'): PushSubscriptionView {
  return {
    id,
    account_id: account,
    key_id: 'key-1',
    recipient,
    kind: 'webpush',
    device: 'laptop',
    endpoint_origin: 'https://push.example.net',
    created_at: '2026-11-29T05:00:00.000Z',
    last_success_at: null,
  };
}

/** What the status service answers (each reply parsed by its proto schema, so it is a valid one). */
function answer(req: PushRequest): unknown {
  switch (req.op) {
    case 'configure-vapid':
      return PushVapidReply.parse({
        v: 1,
        ok: true,
        public_key: PUBLIC_KEY,
        subject: req.subject ?? 'mailto:push@herald.example',
      });
    case 'configure-fcm':
    case 'configure-apns':
      return PushStatusReply.parse({
        v: 1,
        ok: true,
        credentials: {
          webpush: { configured: false, public_key: null, subject: null },
          fcm: { configured: true, project_id: 'my-app', client_email: SA.client_email },
          apns: {
            configured: true,
            key_id: 'KEY1234567',
            team_id: 'TEAM123456',
            topic: 'com.example.app',
            sandbox: true,
          },
          subscriptions: 0,
        },
      });
    case 'status':
      return PushStatusReply.parse({
        v: 1,
        ok: true,
        credentials: {
          webpush: { configured: true, public_key: PUBLIC_KEY, subject: 'mailto:ops@example.com' },
          fcm: { configured: false },
          apns: { configured: false },
          subscriptions: 2,
        },
      });
    case 'list':
      return PushListReply.parse({
        v: 1,
        ok: true,
        subscriptions: [view(req.account_id, 'sub-1', req.recipient)],
      });
    case 'unsubscribe':
    case 'test':
      if (req.id === MISSING) {
        return errorReply(
          new HeraldError('not_found', `no push subscription ${req.id} in this account`, {
            field: 'id',
          }),
        );
      }
      return req.op === 'test'
        ? PushTestReply.parse({ v: 1, ok: true, http_status: 201, error: null, latency_ms: 12 })
        : PushSubscriptionReply.parse({
            v: 1,
            ok: true,
            subscription: view(req.account_id, req.id),
          });
    default:
      return errorReply(new HeraldError('invalid_field', `op ${req.op} is not asked by auth`));
  }
}

function startResponder(): Subscription {
  return statusNc.subscribe(PUSH_API_SUBJECT, {
    callback: (_err, msg) => {
      const req = PushRequest.parse(codec.decode(msg.data));
      asked.push(req);
      msg.respond(codec.encode(answer(req)));
    },
  });
}

beforeAll(async () => {
  stack = await startAccountApi();
  statusNc = await connect(natsOf(stack.servers).connectOptions('status'));
  responder = startResponder();
  await statusNc.flush();
});
afterAll(async () => {
  await statusNc?.close();
  await stack?.stop();
});
beforeEach(() => {
  asked.length = 0;
});

const admin = (...argv: string[]) =>
  inProcessAdmin(argv, {
    DATABASE_URL: stack.servers.pg.url,
    ...natsOf(stack.servers).env('auth'),
  });

function json(run: Run): Record<string, unknown> {
  expect(run.stderr).toBe('');
  expect(run.status).toBe(0);
  return JSON.parse(run.stdout) as Record<string, unknown>;
}

describe('push commands (admin CLI)', () => {
  let account: string;
  beforeAll(async () => {
    account = (await createAccount(stack.servers.db, { email: 'push-cli@example.com' })).id;
  });

  it('push configure --vapid generate asks configure-vapid and prints the public key', async () => {
    const text = await admin(
      'push',
      'configure',
      '--account',
      account,
      '--vapid',
      'generate',
      '--vapid-subject',
      'mailto:ops@example.com',
    );
    expect(text.status).toBe(0);
    expect(text.stdout).toContain(`public key: ${PUBLIC_KEY}`);
    expect(text.stdout).toMatch(/subject: {4}mailto:ops@example\.com/);
    expect(
      json(await admin('push', 'configure', '--account', account, '--vapid', 'generate', '--json')),
    ).toEqual({
      account_id: account,
      public_key: PUBLIC_KEY,
      subject: 'mailto:push@herald.example',
    });
    expect(asked).toEqual([
      { v: 1, op: 'configure-vapid', account_id: account, subject: 'mailto:ops@example.com' },
      { v: 1, op: 'configure-vapid', account_id: account },
    ]);
  });

  it('refuses bad flags naming them, before asking anything', async () => {
    const cases: [string[], RegExp][] = [
      [['--vapid', 'upload'], /^admin: --vapid: takes only "generate"/],
      [
        ['--vapid', 'generate', '--vapid-subject', 'ops@example.com'],
        /^admin: --vapid-subject: vapid_subject must be a mailto: address or an https:\/\/ URL/,
      ],
      [
        ['--vapid', 'generate', '--vapid-subject', 'http://example.com'],
        /^admin: --vapid-subject: vapid_subject must be a mailto:/,
      ],
      [
        ['--vapid', 'generate', '--vapid-subject', `https://example.com/${'a'.repeat(2048)}`],
        /^admin: --vapid-subject: vapid_subject must be at most 2048 characters/,
      ],
      [[], /^admin: --vapid: say what to configure/],
      [
        ['--fcm-service-account', join(files, 'none.json')],
        /^admin: --fcm-service-account: cannot read/,
      ],
      [['--fcm-service-account', P8_FILE], /^admin: --fcm-service-account: .*not JSON/],
      [
        ['--apns-key', P8_FILE],
        /^admin: --apns-key-id: is required with the other --apns-\* flags/,
      ],
      [
        [
          '--apns-key',
          P8_FILE,
          '--apns-key-id',
          'k1',
          '--apns-team-id',
          'T',
          '--apns-topic',
          'a.b',
        ],
        /^admin: --apns-key-id: apns-key-id must be the 10-character key id/,
      ],
    ];
    for (const [extra, message] of cases) {
      const run = await admin('push', 'configure', '--account', account, ...extra);
      expect({ extra, status: run.status }).toEqual({ extra, status: 2 });
      expect(run.stderr).toMatch(message);
    }
    const nobody = await admin(
      'push',
      'status',
      '--account',
      '6b1c3a4e-1111-4111-8111-111111111111',
    );
    expect(nobody.status).toBe(2);
    expect(nobody.stderr).toMatch(/^admin: --account: account 6b1c3a4e-.* does not exist/);
    const longRecipient = await admin(
      'push',
      'subscriptions',
      '--account',
      account,
      '--recipient',
      'r'.repeat(65),
    );
    expect(longRecipient.status).toBe(2);
    expect(longRecipient.stderr).toMatch(
      /^admin: --recipient: recipient must be at most 64 characters/,
    );
    expect(asked).toEqual([]);
  });

  it('push configure --fcm-service-account and --apns-key read the files and send the keys to be sealed', async () => {
    const run = await admin(
      'push',
      'configure',
      '--account',
      account,
      '--fcm-service-account',
      SA_FILE,
      '--apns-key',
      P8_FILE,
      '--apns-key-id',
      'KEY1234567',
      '--apns-team-id',
      'TEAM123456',
      '--apns-topic',
      'com.example.app',
      '--apns-sandbox',
    );
    expect(run.stderr).toBe('');
    expect(run.stdout).toContain('Stored the FCM service account');
    expect(run.stdout).toContain('topic com.example.app, sandbox (the key sealed)');
    expect(run.stdout).not.toContain('PRIVATE KEY');
    expect(asked).toEqual([
      {
        v: 1,
        op: 'configure-fcm',
        account_id: account,
        service_account: {
          project_id: 'my-app',
          client_email: SA.client_email,
          private_key: RSA,
          token_uri: SA.token_uri,
        },
      },
      {
        v: 1,
        op: 'configure-apns',
        account_id: account,
        apns: {
          key_pem: EC,
          key_id: 'KEY1234567',
          team_id: 'TEAM123456',
          topic: 'com.example.app',
          sandbox: true,
        },
      },
    ]);
  });

  it('push status, subscriptions, unsubscribe and test forward their flags and print the replies', async () => {
    const status = await admin('push', 'status', '--account', account);
    expect(status.stdout).toMatch(/webpush: +configured, public key B/);
    expect(status.stdout).toMatch(/subscriptions: 2/);
    expect(json(await admin('push', 'status', '--account', account, '--json'))).toMatchObject({
      account_id: account,
      webpush: { configured: true, public_key: PUBLIC_KEY },
      fcm: { configured: false },
      subscriptions: 2,
    });
    const listed = json(
      await admin('push', 'subscriptions', '--account', account, '--recipient', 'user-9', '--json'),
    );
    expect(listed).toEqual({ subscriptions: [view(account, 'sub-1', 'user-9')] });
    const listText = await admin('push', 'subscriptions', '--account', account);
    expect(listText.stdout).toMatch(
      /1 push subscription\(s\) of account .*\n {2}sub-1 {2}user-1 {2}webpush {2}https:\/\/push\.example\.net/,
    );
    const deleted = await admin('push', 'unsubscribe', '--account', account, '--id', 'sub-7');
    expect(deleted.stdout).toMatch(/Deleted push subscription sub-7 of recipient user-1/);
    expect(
      json(await admin('push', 'test', '--account', account, '--id', 'sub-7', '--json')),
    ).toEqual({
      id: 'sub-7',
      http_status: 201,
      error: null,
      latency_ms: 12,
    });
    const tested = await admin('push', 'test', '--account', account, '--id', 'sub-7');
    expect(tested.stdout).toMatch(/the push service answered HTTP 201 in 12 ms/);
    expect(asked).toEqual([
      { v: 1, op: 'status', account_id: account },
      { v: 1, op: 'status', account_id: account },
      { v: 1, op: 'list', account_id: account, recipient: 'user-9' },
      { v: 1, op: 'list', account_id: account },
      { v: 1, op: 'unsubscribe', account_id: account, id: 'sub-7' },
      { v: 1, op: 'test', account_id: account, id: 'sub-7' },
      { v: 1, op: 'test', account_id: account, id: 'sub-7' },
    ]);
  });

  it("keeps the status service's refusal with its field", async () => {
    const run = await admin('push', 'unsubscribe', '--account', account, '--id', MISSING);
    expect(run.status).toBe(2);
    expect(run.stderr).toMatch(/^admin: --id: no push subscription sub-missing/);
  });
});

describe('push routes (account API)', () => {
  let user: User;
  let other: User;
  beforeAll(async () => {
    [user, other] = await Promise.all([stack.newUser(), stack.newUser()]);
  });

  it("names the session's account in every request, whoever asks", async () => {
    const status = await stack.call('GET', '/v1/push', { headers: { cookie: user.cookie } });
    expect(status.status).toBe(200);
    expect(status.body).toEqual({
      webpush: { configured: true, public_key: PUBLIC_KEY, subject: 'mailto:ops@example.com' },
      fcm: { configured: false },
      apns: { configured: false },
      subscriptions: 2,
    });
    const vapid = await stack.call('POST', '/v1/push/vapid', {
      body: { subject: 'https://app.example.com/contact' },
      headers: stack.as(user),
    });
    expect(vapid.status).toBe(200);
    expect(vapid.body).toEqual({
      public_key: PUBLIC_KEY,
      subject: 'https://app.example.com/contact',
    });
    const fresh = await stack.call('POST', '/v1/push/vapid', {
      body: {},
      headers: stack.as(other),
    });
    expect(fresh.body.subject).toBe('mailto:push@herald.example');
    const listed = await stack.call('GET', '/v1/push/subscriptions?recipient=user-3', {
      headers: { cookie: other.cookie },
    });
    expect(listed.body).toEqual({ subscriptions: [view(other.accountId, 'sub-1', 'user-3')] });
    const all = await stack.call('GET', '/v1/push/subscriptions', {
      headers: { cookie: user.cookie },
    });
    expect(all.body.subscriptions).toHaveLength(1);
    const deleted = await stack.call('DELETE', '/v1/push/subscriptions/sub-4', {
      headers: stack.as(user),
    });
    expect(deleted.status).toBe(200);
    expect(deleted.body).toEqual(view(user.accountId, 'sub-4'));
    const tested = await stack.call('POST', '/v1/push/subscriptions/sub-4/test', {
      headers: stack.as(other),
    });
    expect(tested.body).toEqual({ http_status: 201, error: null, latency_ms: 12 });
    expect(asked).toEqual([
      { v: 1, op: 'status', account_id: user.accountId },
      {
        v: 1,
        op: 'configure-vapid',
        account_id: user.accountId,
        subject: 'https://app.example.com/contact',
      },
      { v: 1, op: 'configure-vapid', account_id: other.accountId },
      { v: 1, op: 'list', account_id: other.accountId, recipient: 'user-3' },
      { v: 1, op: 'list', account_id: user.accountId },
      { v: 1, op: 'unsubscribe', account_id: user.accountId, id: 'sub-4' },
      { v: 1, op: 'test', account_id: other.accountId, id: 'sub-4' },
    ]);
  });

  it("POST /v1/push/fcm and /v1/push/apns send the session account's keys; bad ones are refused naming the field", async () => {
    const fcm = await stack.call('POST', '/v1/push/fcm', {
      body: { service_account: SA },
      headers: stack.as(user),
    });
    expect(fcm.status).toBe(200);
    expect(fcm.body.fcm).toEqual({
      configured: true,
      project_id: 'my-app',
      client_email: SA.client_email,
    });
    const apns = await stack.call('POST', '/v1/push/apns', {
      body: { key_pem: EC, key_id: 'KEY1234567', team_id: 'TEAM123456', topic: 'com.example.app' },
      headers: stack.as(user),
    });
    expect(apns.status).toBe(200);
    expect(JSON.stringify(apns.body)).not.toContain('PRIVATE KEY');
    expect(asked.map((r) => [r.op, r.account_id])).toEqual([
      ['configure-fcm', user.accountId],
      ['configure-apns', user.accountId],
    ]);
    expect((asked[1] as { apns: { sandbox: boolean } }).apns.sandbox).toBe(false);
    asked.length = 0;
    const badTopic = await stack.call('POST', '/v1/push/apns', {
      body: { key_pem: EC, key_id: 'KEY1234567', team_id: 'TEAM123456', topic: 'a/b' },
      headers: stack.as(user),
    });
    expect(badTopic.status).toBe(400);
    expect(badTopic.body.error).toMatchObject({ code: 'invalid_field', field: 'topic' });
    const badSa = await stack.call('POST', '/v1/push/fcm', {
      body: { service_account: { ...SA, private_key: 'nope' } },
      headers: stack.as(user),
    });
    expect(badSa.body.error).toMatchObject({ code: 'invalid_field', field: 'service_account' });
    expect(asked).toEqual([]);
  });

  it('refuses without a session or CSRF, and bad input naming the field, before asking', async () => {
    const cases: [
      string,
      string,
      { body?: unknown; headers?: Record<string, string> },
      number,
      string,
    ][] = [
      ['GET', '/v1/push', {}, 401, 'herald_session'],
      [
        'POST',
        '/v1/push/vapid',
        { body: {}, headers: { cookie: user.cookie } },
        403,
        'X-Herald-CSRF',
      ],
      [
        'DELETE',
        '/v1/push/subscriptions/sub-1',
        { headers: { cookie: user.cookie } },
        403,
        'X-Herald-CSRF',
      ],
      [
        'POST',
        '/v1/push/vapid',
        { body: { subject: 'ops@example.com' }, headers: stack.as(user) },
        400,
        'subject',
      ],
      ['POST', '/v1/push/vapid', { body: { subject: 7 }, headers: stack.as(user) }, 400, 'subject'],
      [
        'POST',
        '/v1/push/vapid',
        { body: { fcm_service_account: '{}' }, headers: stack.as(user) },
        400,
        'fcm_service_account',
      ],
      [
        'GET',
        `/v1/push/subscriptions?recipient=${'r'.repeat(65)}`,
        { headers: { cookie: user.cookie } },
        400,
        'recipient',
      ],
      [
        'GET',
        '/v1/push/subscriptions?recipient=a&recipient=b',
        { headers: { cookie: user.cookie } },
        400,
        'recipient',
      ],
      [
        'DELETE',
        `/v1/push/subscriptions/${'s'.repeat(65)}`,
        { headers: stack.as(user) },
        400,
        'id',
      ],
    ];
    for (const [method, path, opts, status, field] of cases) {
      const res = await stack.call(method, path, opts);
      expect({ method, path, status: res.status }).toEqual({ method, path, status });
      expect(res.body.error.field).toBe(field);
    }
    expect(asked).toEqual([]);
  });

  it("answers another account's subscription as the status service does: 404 naming id", async () => {
    const res = await stack.call('POST', `/v1/push/subscriptions/${MISSING}/test`, {
      headers: stack.as(user),
    });
    expect(res.status).toBe(404);
    expect(res.body.error).toMatchObject({ code: 'not_found', field: 'id' });
    expect(asked).toEqual([{ v: 1, op: 'test', account_id: user.accountId, id: MISSING }]);
  });
});

describe('without the status service', () => {
  beforeAll(async () => {
    await responder?.drain();
    responder = undefined;
    await statusNc.flush();
  });

  it("is 503 'status service unavailable' in the account API and exit 1 in the CLI", async () => {
    const user = await stack.newUser();
    for (const [method, path] of [
      ['GET', '/v1/push'],
      ['POST', '/v1/push/vapid'],
      ['GET', '/v1/push/subscriptions'],
      ['DELETE', '/v1/push/subscriptions/sub-1'],
      ['POST', '/v1/push/subscriptions/sub-1/test'],
    ] as const) {
      const res = await stack.call(method, path, {
        headers: stack.as(user),
        ...(method === 'POST' && path.endsWith('vapid') ? { body: {} } : {}),
      });
      expect({ path, status: res.status }).toEqual({ path, status: 503 });
      expect(res.body.error.code).toBe('unavailable');
      expect(res.body.error.message).toMatch(
        /^status service unavailable: nothing answered rt\.pushapi\.request/,
      );
      expect(res.headers['retry-after']).toBe('1');
    }
    const run = await admin('push', 'status', '--account', user.accountId);
    expect(run.status).toBe(1);
    expect(run.stderr).toMatch(/^admin: push status failed: status service unavailable/);
  });
});
