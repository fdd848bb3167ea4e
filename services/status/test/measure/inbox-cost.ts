/**
 * Measures inbox mode's cost (issue 32 item 4): Postgres storage per event and per recipient, the
 * status service's memory, and the time to answer a history page (and the unread count) for one
 * recipient holding 10,000 events. Not a test (no assertions): the figures in docs/benchmarks.md,
 * "Inbox", come from it. Real nats-server and Postgres from the test kit; requests go over NATS
 * as an edge or ingress sends them.
 *
 *   node --conditions=herald-source --import tsx services/status/test/measure/inbox-cost.ts
 *
 * EVENTS (10000): events of the one big recipient; SPREAD (1000): recipients of 10 events each,
 * for the per-recipient comparison; PAYLOAD (120): bytes of each payload's JSON; RUNS (300):
 * requests timed per figure.
 */
import { randomUUID } from 'node:crypto';
import { createDb, createLogger } from '@herald/kit';
import { subjects } from '@herald/proto';
import { startNatsServer, startPostgres } from '@herald/testkit';
import { sql } from 'kysely';
import { connect, type NatsConnection } from 'nats';
import {
  createStatusService,
  loadConfig,
  migrateToLatest,
  type StatusDb,
} from '../../src/index.js';

const EVENTS = Number(process.env.EVENTS ?? 10_000);
const SPREAD = Number(process.env.SPREAD ?? 1000);
const PAYLOAD = Number(process.env.PAYLOAD ?? 120);
const RUNS = Number(process.env.RUNS ?? 300);
const PER_REQUEST = 100;

const [nats, pg] = await Promise.all([startNatsServer(), startPostgres()]);
const db = createDb<StatusDb>(pg.url, 5);
await migrateToLatest(db);
const nc = await connect(nats.connectOptions('status'));
const client = await connect(nats.connectOptions('ingress-api'));
const config = loadConfig({
  ...nats.env('status'),
  DATABASE_URL: pg.url,
  TLS_DISABLED: 'true',
  INBOX_MAX_PER_RECIPIENT: String(Math.max(EVENTS, 10_000)),
});
const service = createStatusService(config, {
  nc,
  db,
  logger: createLogger('status', 'warn', process.stderr),
});
await service.start();

const account = randomUUID();
const payload = (i: number) => {
  const base = `{"title":"Order ${i} shipped","url":"/orders/${i}","body":"`;
  return `${base}${'x'.repeat(Math.max(0, PAYLOAD - base.length - 2))}"}`;
};
async function ask(c: NatsConnection, subject: string, body: unknown) {
  const m = await c.request(subject, JSON.stringify(body), { timeout: 30_000 });
  return JSON.parse(new TextDecoder().decode(m.data));
}
async function fill(recipient: string, n: number): Promise<void> {
  for (let i = 0; i < n; i += PER_REQUEST) {
    const events = Array.from({ length: Math.min(PER_REQUEST, n - i) }, (_, j) => ({
      recipient,
      id: randomUUID(),
      ts: Date.now(),
      payload_json: payload(i + j),
    }));
    const reply = await ask(client, subjects.inboxStore(account), {
      v: 1,
      key_id: 'k',
      days: 30,
      events,
    });
    if (!reply.ok || reply.results.some((r: { seq?: number }) => !r.seq)) {
      throw new Error(`store refused: ${JSON.stringify(reply).slice(0, 300)}`);
    }
  }
}
async function tableBytes(): Promise<{ rows: number; heap: number; indexes: number }> {
  await sql`vacuum analyze inbox_events`.execute(db);
  const r = await sql<{ rows: string; heap: string; indexes: string }>`
    select (select count(*) from inbox_events) as rows,
      pg_table_size('inbox_events') as heap, pg_indexes_size('inbox_events') as indexes`.execute(
    db,
  );
  const row = r.rows[0];
  return { rows: Number(row?.rows), heap: Number(row?.heap), indexes: Number(row?.indexes) };
}
async function timed(label: string, run: () => Promise<unknown>): Promise<Record<string, unknown>> {
  for (let i = 0; i < 20; i++) await run();
  const ms: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const t = performance.now();
    await run();
    ms.push(performance.now() - t);
  }
  ms.sort((a, b) => a - b);
  const at = (q: number) =>
    Number((ms[Math.min(ms.length - 1, Math.floor(q * ms.length))] ?? 0).toFixed(2));
  return { what: label, runs: RUNS, p50_ms: at(0.5), p90_ms: at(0.9), p99_ms: at(0.99) };
}

const rssBefore = process.memoryUsage().rss;
const big = randomUUID();
const fillStarted = performance.now();
await fill(big, EVENTS);
const fillMs = performance.now() - fillStarted;
const one = await tableBytes();

const spread = Array.from({ length: SPREAD }, randomUUID);
for (const r of spread) await fill(r, 10);
const all = await tableBytes();
const rssAfter = process.memoryUsage().rss;

const query = (q: Record<string, unknown>) =>
  ask(client, subjects.inboxQuery(account), { v: 1, recipient: big, ...q });
const first = await query({ op: 'history', before: null, limit: 100 });
// The deepest page: the cursor just above the recipient's oldest events.
let cursor: string | null = first.next;
for (let i = 0; i < EVENTS / 100 - 2 && cursor; i++) {
  cursor = (await query({ op: 'history', before: cursor, limit: 100 })).next;
}
const figures = [
  await timed('history, newest page of 100 (before null)', () =>
    query({ op: 'history', before: null, limit: 100 }),
  ),
  await timed('history, oldest page of 100 (deep cursor)', () =>
    query({ op: 'history', before: cursor, limit: 100 }),
  ),
  await timed('history, newest page of 20', () =>
    query({ op: 'history', before: null, limit: 20 }),
  ),
  await timed(`unread count, ${EVENTS} unread`, () => query({ op: 'unread' })),
  await timed('catch-up, 1000 events after seq 0', () =>
    query({ op: 'after', after: 0, limit: 1000 }),
  ),
];
await query({ op: 'read', all: true });
figures.push(await timed(`unread count, ${EVENTS} read`, () => query({ op: 'unread' })));

const spreadRows = all.rows - one.rows;
console.log(
  JSON.stringify(
    {
      events_one_recipient: EVENTS,
      payload_bytes: payload(0).length,
      store_events_per_s: Math.round((EVENTS / fillMs) * 1000),
      one_recipient: {
        rows: one.rows,
        heap_bytes_per_event: Math.round(one.heap / one.rows),
        index_bytes_per_event: Math.round(one.indexes / one.rows),
      },
      spread: {
        recipients: SPREAD,
        rows: spreadRows,
        bytes_per_event: Math.round((all.heap + all.indexes - one.heap - one.indexes) / spreadRows),
        bytes_per_recipient_of_10: Math.round(
          (all.heap + all.indexes - one.heap - one.indexes) / SPREAD,
        ),
      },
      status_rss_growth_mb: Number(((rssAfter - rssBefore) / 1048576).toFixed(1)),
      timings: figures,
    },
    null,
    2,
  ),
);
await service.close();
await Promise.all([nc.close(), client.close()]);
await db.destroy();
await Promise.all([nats.stop(), pg.stop()]);
