import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { post, REPO_ROOT, type WebhookArrival, WebhookReceiver } from '@herald/testkit';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  connect,
  eventually,
  notify,
  rawBody,
  recipient,
  type Tenant,
  useStack,
} from './fixtures.js';

/**
 * Delivery-status webhooks through every surface outside the status service (issue 39): the admin
 * CLI and the account API manage endpoints over the status service's rt.webhookapi.request, and
 * a key's --webhook-payload and a socket's device reach the bodies a real HTTPS receiver verifies.
 */
let receiver: WebhookReceiver;
const statusEnv: Record<string, string> = {
  WEBHOOK_SECRET_KEY: randomBytes(32).toString('base64'),
  // The receiver is on 127.0.0.1: allowed here as `make dev` allows it, never in production.
  WEBHOOK_ALLOW_PRIVATE: 'true',
  WEBHOOK_POLL_MS: '50',
  WEBHOOK_RETRY_SCHEDULE: '100ms,100ms',
};
beforeAll(async () => {
  receiver = await WebhookReceiver.start();
  statusEnv.WEBHOOK_CA_FILE = receiver.caFile;
});
afterAll(() => receiver?.stop());

const stack = useStack({
  services: ['auth', 'ingress-api', 'socket-edge', 'status'],
  env: { status: statusEnv },
});

/** The body of an arrival, verified with the Standard Webhooks library under any of `secrets`. */
function verify(secret: string, a: WebhookArrival): Record<string, unknown> {
  return new Webhook(secret).verify(a.body, a.headers) as Record<string, unknown>;
}

// biome-ignore lint/suspicious/noExplicitAny: each command prints its own JSON object; expect() checks it
type Json = any;
const admin = (...args: string[]) => stack().admin([...args, '--json']) as Promise<Json>;
const adminText = (...args: string[]) => stack().adminText(args);
const refusal = (run: Promise<unknown>) =>
  run.then(
    () => 'no refusal',
    (err: Error) => err.message,
  );

/** The CLI as `npm run -s admin --` runs it, with its exit status and both streams. */
function adminRun(...args: string[]): Promise<{ status: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['--conditions=herald-source', '--import', 'tsx', 'services/auth/src/admin.ts', ...args],
      {
        cwd: REPO_ROOT,
        env: {
          PATH: process.env.PATH ?? '',
          DATABASE_URL: stack().databaseUrl,
          ...stack().nats.env('auth'),
        },
      },
      (err, stdout, stderr) => resolve({ status: err ? Number(err.code ?? 1) : 0, stdout, stderr }),
    );
  });
}

/** An endpoint of `acct` at the receiver's `path`, created through the admin CLI. */
const endpointOf = (acct: string, path: string, events?: string) =>
  admin(
    'webhook',
    'create',
    '--account',
    acct,
    '--url',
    receiver.url(path),
    ...(events ? ['--events', events] : []),
  );

async function account(plan?: string): Promise<string> {
  return (await stack().createAccount(plan ? { plan } : {})).id;
}

/** The CLI tests start a process per command, each a few seconds on a loaded machine. */
const CLI_TEST_TIMEOUT_MS = 180_000;

describe('webhook endpoints with the admin CLI', () => {
  it(
    'creates, lists, tests, rotates, replays and deletes, printing exactly what it says',
    async () => {
      const acct = await account('hobby');
      const url = receiver.url('/cli');
      const created = await admin('webhook', 'create', '--account', acct, '--url', url);
      expect(Object.keys(created).sort()).toEqual(['events', 'id', 'secret', 'url']);
      expect(created.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
      expect(created.events).toEqual([
        'event.sent',
        'event.queued',
        'event.delivered',
        'event.failed',
        'event.read',
      ]);
      const some = await admin(
        'webhook',
        'create',
        '--account',
        acct,
        '--url',
        receiver.url('/cli-some'),
        '--events',
        'event.delivered, event.read,event.delivered',
      );
      expect(some.events).toEqual(['event.delivered', 'event.read']);

      const listed = await admin('webhook', 'list', '--account', acct);
      expect(listed.endpoints.map((e: { id: string }) => e.id).sort()).toEqual(
        [created.id, some.id].sort(),
      );
      expect(JSON.stringify(listed)).not.toContain('whsec_');
      const text = await adminText('webhook', 'list', '--account', acct);
      expect(text).toContain(`${created.id}  ${url}  active, 0 pending`);

      const test = await admin('webhook', 'test', '--id', created.id);
      expect(test.message_id).toMatch(/^test:/);
      await eventually(() => receiver.at('/cli').length > 0, 'the test message');
      const [arrival] = receiver.at('/cli');
      expect(arrival?.headers['webhook-id']).toBe(test.message_id);
      expect(verify(created.secret, arrival as WebhookArrival)).toMatchObject({
        type: 'webhook.test',
      });
      let attempts: Json;
      await eventually(async () => {
        attempts = await admin('webhook', 'attempts', '--id', created.id);
        return attempts.attempts.length > 0;
      }, 'the attempt listed');
      expect(attempts.attempts[0]).toMatchObject({
        message_id: test.message_id,
        type: 'webhook.test',
        http_status: 200,
        error: null,
      });
      expect(await adminText('webhook', 'attempts', '--id', created.id)).toMatch(
        /webhook\.test {2}HTTP 200 {2}\d+ ms/,
      );

      // A new secret, once; the old one keeps signing beside it.
      const rotated = await admin('webhook', 'rotate-secret', '--id', created.id);
      expect(rotated).toEqual({ id: created.id, url, secret: expect.stringMatching(/^whsec_/) });
      expect(rotated.secret).not.toBe(created.secret);
      await admin('webhook', 'test', '--id', created.id);
      await eventually(() => receiver.at('/cli').length > 1, 'the second test message');
      const second = receiver.at('/cli')[1] as WebhookArrival;
      expect(verify(rotated.secret, second)).toMatchObject({ type: 'webhook.test' });
      expect(verify(created.secret, second)).toMatchObject({ type: 'webhook.test' });

      expect(await admin('webhook', 'enable', '--id', created.id)).toMatchObject({
        id: created.id,
        disabled_at: null,
      });
      expect(
        await admin('webhook', 'replay', '--id', created.id, '--since', '2020-01-01T00:00:00Z'),
      ).toEqual({ queued: 0 });

      expect(await admin('webhook', 'delete', '--id', some.id)).toMatchObject({ id: some.id });
      expect(
        (await admin('webhook', 'list', '--account', acct)).endpoints.map(
          (e: { id: string }) => e.id,
        ),
      ).toEqual([created.id]);
      expect(await refusal(admin('webhook', 'delete', '--id', some.id))).toMatch(
        /--id: no webhook endpoint/,
      );
    },
    CLI_TEST_TIMEOUT_MS,
  );

  it(
    'names the flag and the fix when an argument is refused',
    async () => {
      const acct = await account();
      const create = (...extra: string[]) =>
        refusal(admin('webhook', 'create', '--account', acct, ...extra));
      expect(await create('--url', receiver.url('/x'), '--events', 'event.opened')).toMatch(
        /--events: "event.opened" is not a comma list of event types: use any of event.sent, event.queued/,
      );
      expect(await create('--url', 'ftp://example.com/hooks')).toMatch(
        /--url: url: must be an https:\/\/ or http:\/\/ URL/,
      );
      expect(
        await refusal(
          admin(
            'webhook',
            'create',
            '--account',
            '6b1c3a4e-1111-4111-8111-111111111111',
            '--url',
            'https://a.example',
          ),
        ),
      ).toMatch(/--account: account 6b1c3a4e-1111-4111-8111-111111111111 does not exist/);
      expect(await refusal(admin('webhook', 'list', '--account', 'acme'))).toMatch(
        /--account: account must be a UUID/,
      );
      expect(
        await refusal(admin('webhook', 'replay', '--id', 'x', '--since', 'yesterday')),
      ).toMatch(/--since: since "yesterday" is not a date: give a date \(2025-07-01/);
      expect(await refusal(admin('webhook', 'test', '--id', 'nope'))).toMatch(
        /--id: no webhook endpoint nope/,
      );
    },
    CLI_TEST_TIMEOUT_MS,
  );
});

describe('webhook endpoints through the account API', () => {
  it("serves the session's account only: another account's endpoint is 404 everywhere", async () => {
    const [mine, other] = [await account(), await account()];
    const api = (acct: string, method: string, path: string, body?: unknown) =>
      stack().accountApi(acct, method, path, body);
    const created = await api(mine, 'POST', '/v1/webhooks', {
      url: receiver.url('/api'),
      events: ['event.sent', 'event.delivered'],
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      account_id: mine,
      url: receiver.url('/api'),
      events: ['event.sent', 'event.delivered'],
      disabled_at: null,
      failing_since: null,
      secret: expect.stringMatching(/^whsec_/),
    });
    const id = created.body.id as string;
    const list = await api(mine, 'GET', '/v1/webhooks');
    expect(list.body.endpoints).toEqual([
      expect.objectContaining({ id, events: ['event.sent', 'event.delivered'] }),
    ]);
    expect(JSON.stringify(list.body)).not.toContain('whsec_');
    expect((await api(other, 'GET', '/v1/webhooks')).body).toEqual({ endpoints: [] });

    for (const [method, path, body] of [
      ['GET', `/v1/webhooks/${id}`],
      ['DELETE', `/v1/webhooks/${id}`],
      ['POST', `/v1/webhooks/${id}/rotate-secret`],
      ['POST', `/v1/webhooks/${id}/enable`],
      ['GET', `/v1/webhooks/${id}/attempts`],
      ['POST', `/v1/webhooks/${id}/test`],
      ['POST', `/v1/webhooks/${id}/replay`, { since: '2020-01-01T00:00:00Z' }],
    ] as const) {
      const res = await api(other, method, path, body);
      expect(res.status, `${method} ${path}`).toBe(404);
      expect(res.body.error).toMatchObject({ code: 'not_found', field: 'id' });
    }

    const test = await api(mine, 'POST', `/v1/webhooks/${id}/test`);
    expect(test.status).toBe(202);
    await eventually(async () => {
      const res = await api(mine, 'GET', `/v1/webhooks/${id}/attempts?limit=5`);
      return res.body.attempts?.some(
        (a: { message_id: string; http_status: number }) =>
          a.message_id === test.body.message_id && a.http_status === 200,
      );
    }, 'the test attempt listed');
    expect(verify(created.body.secret, receiver.at('/api')[0] as WebhookArrival)).toMatchObject({
      type: 'webhook.test',
    });

    const rotated = await api(mine, 'POST', `/v1/webhooks/${id}/rotate-secret`);
    expect(rotated.body).toMatchObject({ id, secret: expect.stringMatching(/^whsec_/) });
    expect((await api(mine, 'POST', `/v1/webhooks/${id}/enable`)).body).toMatchObject({ id });
    const replay = await api(mine, 'POST', `/v1/webhooks/${id}/replay`, {
      since: '2020-01-01T00:00:00Z',
    });
    expect(replay.status).toBe(202);
    expect(replay.body).toEqual({ queued: 0 });
    expect((await api(mine, 'DELETE', `/v1/webhooks/${id}`)).body).toMatchObject({ id });
    expect((await api(mine, 'GET', '/v1/webhooks')).body).toEqual({ endpoints: [] });
  });

  it('names the field of a refused body or query', async () => {
    const acct = await account();
    const api = (method: string, path: string, body?: unknown) =>
      stack().accountApi(acct, method, path, body);
    const cases: [string, string, unknown, string, RegExp][] = [
      ['POST', '/v1/webhooks', {}, 'url', /url is required/],
      ['POST', '/v1/webhooks', { url: 7 }, 'url', /url is required/],
      ['POST', '/v1/webhooks', { url: 'https://a.example', events: 'all' }, 'events', /JSON array/],
      [
        'POST',
        '/v1/webhooks',
        { url: 'https://a.example', events: ['event.opened'] },
        'events.0',
        /event\.sent/,
      ],
      ['POST', '/v1/webhooks', { url: 'ftp://a.example' }, 'url', /must be an https/],
      [
        'POST',
        '/v1/webhooks',
        { url: 'https://a.example', secret: 'x' },
        'secret',
        /unknown field/,
      ],
      ['POST', '/v1/webhooks/x/replay', {}, 'since', /since is required/],
      ['POST', '/v1/webhooks/x/replay', { since: '2025-07-01 12:00' }, 'since', /is not a date/],
      ['GET', '/v1/webhooks/x/attempts?limit=101', undefined, 'limit', /at most 100/],
    ];
    for (const [method, path, body, field, message] of cases) {
      const res = await api(method, path, body);
      expect(res.status, `${method} ${path} ${JSON.stringify(body)}`).toBe(400);
      expect(res.body.error.field).toBe(field);
      expect(res.body.error.message).toMatch(message);
    }
  });
});

describe('what a key and a socket add to the bodies', () => {
  it(
    'carries a --webhook-payload key’s payload, and the device that proved receipt',
    async () => {
      const acct = await account();
      const endpoint = await endpointOf(acct, '/bodies', 'event.queued,event.delivered');
      const flagged: Tenant = {
        account: acct,
        key: await stack().createKey({ account: acct, kind: 'test', webhookPayload: true }),
      };
      expect(flagged.key.webhook_payload).toBe(true);
      const to = recipient();
      // A number past double precision: its bytes must reach the body as the sender wrote them.
      const payloadJson =
        '{"order":7,"note":"café \\"au lait\\"","big":123456789012345678901234567890}';
      const res = await post(stack().baseUrl, stack().ca, undefined, {
        raw: rawBody({ recipient: to, apiKey: flagged.key.key, payloadJson }),
      });
      expect(res.status).toBe(202);
      const socket = await connect(stack(), {
        apiKey: flagged.key.key,
        recipient: to,
        v1: true,
        // The whole query (it replaces the default one): with the device.
        query: new URLSearchParams({
          api_key: flagged.key.key,
          recipient: to,
          client: 'mobile',
          device: 'phone-7',
        }).toString(),
      });
      const bodies = () =>
        receiver
          .at('/bodies')
          .map((a) => verify(endpoint.secret, a) as { type: string; data: Json });
      await eventually(() => bodies().length >= 2, 'event.queued and event.delivered');
      socket.close();
      const byType = new Map(bodies().map((b) => [b.type, b]));
      expect(byType.get('event.queued')?.data).toMatchObject({
        id: res.body.id,
        recipient: to,
        key_id: flagged.key.id,
        status: 'pending',
        payload: { order: 7, note: 'café "au lait"' },
      });
      const queuedRaw = receiver.at('/bodies').find((a) => a.body.includes('"event.queued"'))?.body;
      expect(queuedRaw).toContain('"big":123456789012345678901234567890');
      expect(byType.get('event.delivered')?.data).toMatchObject({
        id: res.body.id,
        status: 'delivered',
        device: 'phone-7',
      });
    },
    CLI_TEST_TIMEOUT_MS,
  );

  it(
    'sends a live event answered 200 as event.sent and event.delivered, once each',
    async () => {
      const acct = await account();
      const endpoint = await endpointOf(acct, '/live');
      const live: Tenant = {
        account: acct,
        key: await stack().createKey({ account: acct, kind: 'test' }),
      };
      const to = recipient();
      const socket = await connect(stack(), { apiKey: live.key.key, recipient: to, v1: true });
      const res = await notify(stack(), live, to, { n: 1 });
      expect(res.status).toBe(200);
      const arrived = () => receiver.at('/live').map((a) => verify(endpoint.secret, a));
      await eventually(() => arrived().length >= 2, 'event.sent and event.delivered');
      socket.close();
      // A sentinel sent afterwards (queued: the socket is gone) arrives after anything late.
      const later = await notify(stack(), live, to, { n: 2 });
      expect(later.status).toBe(202);
      await eventually(
        () => arrived().some((b) => (b.data as Json).id === later.body.id),
        'the sentinel',
      );
      const mine = arrived().filter((b) => (b.data as Json).id === res.body.id);
      expect(mine.map((b) => b.type).sort()).toEqual(['event.delivered', 'event.sent']);
      const sent = mine.find((b) => b.type === 'event.sent') as { data: Json };
      const delivered = mine.find((b) => b.type === 'event.delivered') as { data: Json };
      expect(delivered.data).toMatchObject({ id: res.body.id, recipient: to, status: 'delivered' });
      expect(delivered.data.ts).toBe(sent.data.ts);
    },
    CLI_TEST_TIMEOUT_MS,
  );

  it(
    'carries no payload for a key without the flag',
    async () => {
      const acct = await account();
      const endpoint = await endpointOf(acct, '/plain', 'event.queued');
      const plain: Tenant = {
        account: acct,
        key: await stack().createKey({ account: acct, kind: 'test' }),
      };
      const res = await notify(stack(), plain, recipient(), { secret: 'personal' });
      expect(res.status).toBe(202);
      await eventually(() => receiver.at('/plain').length > 0, 'event.queued');
      const body = verify(endpoint.secret, receiver.at('/plain')[0] as WebhookArrival) as {
        data: Record<string, unknown>;
      };
      expect(body.data).toMatchObject({ id: res.body.id, status: 'pending' });
      expect('payload' in body.data).toBe(false);
    },
    CLI_TEST_TIMEOUT_MS,
  );
});

describe('without the status service', () => {
  it(
    'says the status service is unavailable: the CLI exits 1, the account API answers 503',
    async () => {
      const acct = await account();
      await stack().stopService('status');
      try {
        const run = await adminRun('webhook', 'list', '--account', acct);
        expect(run.status).toBe(1);
        expect(run.stdout).toBe('');
        expect(run.stderr).toMatch(
          /webhook list failed: status service unavailable: nothing answered rt\.webhookapi\.request/,
        );
        const res = await stack().accountApi(acct, 'GET', '/v1/webhooks');
        expect(res.status).toBe(503);
        expect(res.body.error).toMatchObject({
          code: 'unavailable',
          message: expect.stringMatching(/^status service unavailable/),
        });
      } finally {
        await stack().startService('status');
      }
    },
    CLI_TEST_TIMEOUT_MS,
  );
});
