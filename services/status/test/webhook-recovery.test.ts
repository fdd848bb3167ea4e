import { randomBytes } from 'node:crypto';
import { subjects, WEBHOOK_API_SUBJECT } from '@herald/proto';
import {
  freePort,
  makeCerts,
  type ServiceProcess,
  startServiceProcess,
  type TestCerts,
} from '@herald/testkit';
import type { NatsConnection } from 'nats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, type InboxFixture, request, startInboxFixture, uuid } from './support.js';
import { Receiver, verified } from './webhook-receiver.js';

/*
 * The sender runs in a status process of its own (the in-process instance only writes, with
 * WEBHOOK_CONCURRENCY=0), so the test can kill it mid-delivery and start another, as an operator's
 * crash and restart would.
 */
const KEY = randomBytes(32).toString('base64');
const SCHEDULE = Array.from({ length: 40 }, () => '300ms').join(',');

let rx: Receiver;
let f: InboxFixture;
let certs: TestCerts;
let auth: NatsConnection;
let ingress: NatsConnection;
let sender: ServiceProcess | undefined;

async function startSender(): Promise<ServiceProcess> {
  return startServiceProcess(
    'status',
    await freePort(),
    {
      ...f.nats.env('status'),
      DATABASE_URL: f.pg.url,
      TLS_CERT_FILE: certs.certFile,
      TLS_KEY_FILE: certs.keyFile,
      WEBHOOK_SECRET_KEY: KEY,
      WEBHOOK_ALLOW_PRIVATE: 'true',
      WEBHOOK_CA_FILE: rx.caFile,
      WEBHOOK_RETRY_SCHEDULE: SCHEDULE,
      WEBHOOK_TIMEOUT_MS: '3000',
      WEBHOOK_POLL_MS: '100',
      LOG_LEVEL: process.env.TEST_LOG ?? 'warn',
    },
    certs.ca,
  );
}

beforeAll(async () => {
  [rx, certs] = await Promise.all([Receiver.start(), makeCerts()]);
  // Both instances answer endpoint requests (one queue group): the same rules on both.
  f = await startInboxFixture({
    WEBHOOK_SECRET_KEY: KEY,
    WEBHOOK_ALLOW_PRIVATE: 'true',
    WEBHOOK_CONCURRENCY: '0',
  });
  [auth, ingress] = await Promise.all([f.client('auth'), f.client('ingress-api')]);
  sender = await startSender();
}, 90_000);
afterAll(async () => {
  await sender?.stop('SIGKILL');
  await f?.close();
  await rx?.stop();
});

const ask = (body: Record<string, unknown>) =>
  request(auth, WEBHOOK_API_SUBJECT, { v: 1, ...body });

async function endpoint(account: string, path: string) {
  const r = await ask({
    op: 'create',
    account_id: account,
    url: rx.url(path),
    events: ['event.sent'],
  });
  expect(r.ok, JSON.stringify(r)).toBe(true);
  return { id: r.endpoint.id as string, secret: r.secret as string };
}

function publishSent(account: string, n: number): string[] {
  const events = Array.from({ length: n }, () => uuid());
  for (const id of events) {
    ingress.publish(
      subjects.status(account),
      JSON.stringify({
        v: 1,
        id,
        account_id: account,
        key_id: 'k',
        recipient: uuid(),
        status: 'sent',
        at: Date.now(),
      }),
    );
  }
  return events;
}

const drained = (id: string) =>
  eventually(
    async () => (await ask({ op: 'get', id })).endpoint.pending === 0,
    `endpoint ${id} drained`,
    30_000,
  );

describe('webhook delivery across failures', () => {
  it('a receiver down for a while, then up, gets everything', async () => {
    const account = uuid();
    const path = `/downup-${uuid()}`;
    const { id, secret } = await endpoint(account, path);
    await rx.down();
    const events = publishSent(account, 20);
    await eventually(
      async () => {
        const rows = await f.db
          .selectFrom('webhook_messages')
          .select('attempts')
          .where('endpoint_id', '=', id)
          .execute();
        return rows.length === 20 && rows.every((r) => r.attempts >= 2);
      },
      'every message failed twice while the receiver was down',
      30_000,
    );
    const failures = (await ask({ op: 'attempts', id, limit: 100 })).attempts;
    expect(failures.length).toBeGreaterThanOrEqual(20);
    expect(failures[0]).toMatchObject({
      http_status: null,
      error: expect.stringMatching(/ECONNREFUSED/),
    });
    await rx.up();
    await drained(id);
    expect(rx.ids(path)).toEqual(new Set(events.map((ev) => `${ev}:event.sent`)));
    for (const a of rx.at(path)) verified(secret, a);
  }, 60_000);

  it('a status process killed mid-delivery loses nothing: another sends what it held', async () => {
    const account = uuid();
    const path = `/kill-${uuid()}`;
    rx.behave.set(path, () => 'hang');
    const { id, secret } = await endpoint(account, path);
    const events = publishSent(account, 10);
    // Every event written (none held in the killed process's unacked fetch of the status stream,
    // which would come back only after the stream's ack wait), some requests in flight.
    await eventually(
      async () =>
        (
          await f.db
            .selectFrom('webhook_messages')
            .select('seq')
            .where('endpoint_id', '=', id)
            .execute()
        ).length === 10,
      'every message queued',
    );
    await eventually(() => (rx.hanging.get(path)?.size ?? 0) >= 1, 'requests in flight');
    const held = new Set(rx.at(path).map((a) => a.id));
    await sender?.stop('SIGKILL');
    rx.behave.set(path, () => ({ status: 200 }));
    sender = await startSender();
    await drained(id);
    const got = rx.at(path);
    expect(new Set(got.map((a) => a.id))).toEqual(new Set(events.map((ev) => `${ev}:event.sent`)));
    // What the killed process held was sent again, with the same id, and answered this time.
    for (const h of held) {
      expect(got.filter((a) => a.id === h).length).toBeGreaterThanOrEqual(2);
    }
    for (const a of got) verified(secret, a);
  }, 90_000);

  it('SIGTERM lets a request in flight finish and records it', async () => {
    const account = uuid();
    const path = `/drain-${uuid()}`;
    rx.behave.set(path, () => ({ status: 200, delayMs: 1500 }));
    const { id } = await endpoint(account, path);
    const [ev] = publishSent(account, 1);
    await eventually(() => rx.at(path).length === 1, 'the request arrives');
    const stopping = sender;
    await stopping?.stop('SIGTERM');
    sender = undefined;
    if (process.env.TEST_LOG) console.log(stopping?.output());
    // Recorded by the process that stopped: nothing waits, nothing was sent twice.
    expect((await ask({ op: 'get', id })).endpoint.pending).toBe(0);
    expect(rx.at(path).map((a) => a.id)).toEqual([`${ev}:event.sent`]);
    const attempts = (await ask({ op: 'attempts', id })).attempts;
    expect(attempts).toEqual([expect.objectContaining({ http_status: 200, error: null })]);
  }, 60_000);
});
