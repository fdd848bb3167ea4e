import { createDb, createLogger } from '@herald/kit';
import { PUSH_API_SUBJECT, subjects } from '@herald/proto';
import {
  type NatsServer,
  type PostgresServer,
  PushService,
  startNatsServer,
  startPostgres,
} from '@herald/testkit';
import type { Kysely } from 'kysely';
import { connect, type NatsConnection } from 'nats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.js';
import type { StatusDb } from '../src/db-schema.js';
import { migrateToLatest } from '../src/migrate.js';
import { createStatusService, type StatusService } from '../src/service.js';
import { PUSH_ENV } from './push-support.js';
import { eventually, request, uuid } from './support.js';

let nats: NatsServer;
let pg: PostgresServer;
let push: PushService;
let db: Kysely<StatusDb>;
const conns: NatsConnection[] = [];
let env: Record<string, string>;
beforeAll(async () => {
  [nats, pg, push] = await Promise.all([startNatsServer(), startPostgres(), PushService.start()]);
  db = createDb<StatusDb>(pg.url, 5);
  await migrateToLatest(db);
  env = PUSH_ENV(push.caFile);
});
afterAll(async () => {
  await Promise.all(conns.map((c) => c.close()));
  await db?.destroy();
  await Promise.all([nats?.stop(), pg?.stop(), push?.stop()]);
});

async function startService(): Promise<StatusService> {
  const nc = await connect(nats.connectOptions('status'));
  conns.push(nc);
  const config = loadConfig({
    ...nats.env('status'),
    DATABASE_URL: pg.url,
    TLS_DISABLED: 'true',
    LOG_LEVEL: 'silent',
    ...env,
  });
  const s = createStatusService(config, { nc, db, logger: createLogger('status', 'silent') });
  await s.start();
  return s;
}

describe('push retries across a restart', () => {
  it('a push waiting for its retry is sent by the next instance that starts', async () => {
    const first = await startService();
    const ingress = await connect(nats.connectOptions('ingress-api'));
    conns.push(ingress);
    const [account, recipient, id] = [uuid(), uuid(), uuid()];
    const ask = (body: Record<string, unknown>) =>
      request(ingress, PUSH_API_SUBJECT, { v: 1, account_id: account, ...body });
    expect((await ask({ op: 'configure-vapid' })).ok).toBe(true);
    const sub = push.subscribe();
    const r = await ask({
      op: 'subscribe',
      key_id: 'k',
      recipient,
      kind: 'webpush',
      subscription: sub,
    });
    expect(r.ok).toBe(true);
    push.answer(sub.endpoint, 503, 1, { 'retry-after': '3' });
    ingress.publish(
      subjects.status(account),
      JSON.stringify({
        v: 1,
        id,
        account_id: account,
        key_id: 'k',
        recipient,
        status: 'pending',
        at: Date.now(),
        push: { after_ms: 500, ttl_s: 600, title: 'Again' },
      }),
    );
    await eventually(() => push.arrivals(sub.endpoint).length === 1, 'the first attempt', 5000);
    await first.close();
    const due = await db
      .selectFrom('push_due')
      .selectAll()
      .where('event_id', '=', id)
      .executeTakeFirstOrThrow();
    expect(due.attempts).toBe(1);
    expect(due.leased_by).toBeNull();
    expect(due.due_at.getTime()).toBeGreaterThan(Date.now());
    const second = await startService();
    try {
      await eventually(
        () => push.accepted(sub.endpoint).length === 1,
        'sent after the restart',
        8000,
      );
      expect(push.arrivals(sub.endpoint).map((a) => a.status)).toEqual([503, 201]);
    } finally {
      await second.close();
    }
  });

  it('at shutdown lets a push in flight finish and records it', async () => {
    const service = await startService();
    const ingress = conns[1] as NatsConnection;
    const [account, recipient, id] = [uuid(), uuid(), uuid()];
    const ask = (body: Record<string, unknown>) =>
      request(ingress, PUSH_API_SUBJECT, { v: 1, account_id: account, ...body });
    expect((await ask({ op: 'configure-vapid' })).ok).toBe(true);
    const sub = push.subscribe();
    await ask({ op: 'subscribe', key_id: 'k', recipient, kind: 'webpush', subscription: sub });
    push.delayMs = 1500;
    const sent = Date.now();
    ingress.publish(
      subjects.status(account),
      JSON.stringify({
        v: 1,
        id,
        account_id: account,
        key_id: 'k',
        recipient,
        status: 'pending',
        at: sent,
        push: { after_ms: 200, ttl_s: 600, title: 'Late' },
      }),
    );
    // The writer writes within its batch wait (1 s), the push starts and is held 1.5 s.
    await eventually(
      async () =>
        (
          await db
            .selectFrom('push_due')
            .select('leased_by')
            .where('event_id', '=', id)
            .executeTakeFirst()
        )?.leased_by != null,
      'the push claimed',
      5000,
    );
    await new Promise((r) => setTimeout(r, 300));
    expect(push.arrivals(sub.endpoint)).toEqual([]);
    await service.close();
    push.delayMs = 0;
    expect(push.accepted(sub.endpoint)).toHaveLength(1);
    const row = await db
      .selectFrom('status_events')
      .select(['pushed_at', 'pushed_count'])
      .where('id', '=', id)
      .executeTakeFirstOrThrow();
    expect(row.pushed_count).toBe(1);
    expect(
      await db.selectFrom('push_due').select('event_id').where('event_id', '=', id).execute(),
    ).toEqual([]);
  });
});
