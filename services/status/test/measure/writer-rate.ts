/**
 * Measures the rows per second the status writer sustains: N status records (half `pending`, then
 * half of those `delivered`, the way real traffic mixes them) are published into the status
 * stream while the writer is stopped, then the writer is started and timed until every record
 * is in Postgres. Not a test (no assertions): the figure in docs/architecture-history.md
 * ("Delivery status: the writer's rate") comes from it.
 * PER_MESSAGE > 1 publishes the records as StatusBatch messages of that many records (what
 * producers send since they coalesce a turn's records); 1, the single-record form. `cpu_ms` is
 * this process's CPU while the writer drains the stream (the writer, plus the 50 ms polls of the
 * stream's size), not Postgres's; `nats_cpu_ms` is the private nats-server's CPU (from
 * /proc, Linux) while the records are published and stored, and while the writer drains them;
 * `pg_cpu_ms` is Postgres's (the postmaster and its backends) while the writer drains them.
 *
 * WEBHOOK_ENDPOINTS=N gives the account N webhook endpoints subscribed to every type (nothing is
 * sent: WEBHOOK_CONCURRENCY=0), so the writer also enqueues a message per endpoint and first
 * transition in its transactions; `webhook_messages` is how many it enqueued.
 *
 *   node --conditions=herald-source --import tsx services/status/test/measure/writer-rate.ts
 */
import { randomUUID } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { createDb, createLogger } from '@herald/kit';
import { WEBHOOK_EVENT_TYPES } from '@herald/proto';
import { childCpuMs, startNatsServer, startPostgres } from '@herald/testkit';
import { connect } from 'nats';
import {
  createStatusService,
  loadConfig,
  migrateToLatest,
  type StatusDb,
} from '../../src/index.js';

const N = Number(process.env.RECORDS ?? 100_000);
const BATCH = process.env.STATUS_BATCH_MAX ?? '1000';
const PER_MESSAGE = Number(process.env.PER_MESSAGE ?? 1);
const ENDPOINTS = Number(process.env.WEBHOOK_ENDPOINTS ?? 0);

/** CPU ms of the nats-server this process started (its child). */
const natsCpuMs = () => childCpuMs('nats-server');

/** CPU ms of the Postgres this process started: its postmaster and every backend it forked. */
function pgCpuMs(): number {
  const stats = readdirSync('/proc')
    .filter((p) => /^\d+$/.test(p))
    .flatMap((pid) => {
      try {
        const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
        const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
        return [{ pid: Number(pid), name: stat.includes('(postgres)'), fields }];
      } catch {
        return []; // ended while listing
      }
    });
  const parentOf = new Map(stats.map((s) => [s.pid, Number(s.fields[1])]));
  // Its child, or its grandchild when started through runuser (as root).
  const master = stats.find((s) => {
    const parent = Number(s.fields[1]);
    return s.name && (parent === process.pid || parentOf.get(parent) === process.pid);
  });
  if (!master) return 0;
  // utime, stime, then cutime, cstime (backends that exited); one tick is 10 ms.
  const ticks = (f: string[], from: number) => Number(f[from]) + Number(f[from + 1]);
  let total = ticks(master.fields, 11) + ticks(master.fields, 13);
  for (const s of stats) if (Number(s.fields[1]) === master.pid) total += ticks(s.fields, 11);
  return total * 10;
}

const [nats, pg] = await Promise.all([startNatsServer(), startPostgres()]);
const db = createDb<StatusDb>(pg.url, 5);
await migrateToLatest(db);
const nc = await connect(nats.connectOptions());
const config = loadConfig({
  ...nats.env('status'),
  DATABASE_URL: pg.url,
  TLS_DISABLED: 'true',
  STATUS_BATCH_MAX: BATCH,
  WEBHOOK_CONCURRENCY: '0',
  WEBHOOK_ENDPOINT_QUEUE_MAX: '10000000',
});
const logger = createLogger(
  'status',
  process.env.LOG_LEVEL === 'debug' ? 'debug' : 'warn',
  process.stderr,
);
// Start once to create the stream and consumer, then stop so the records pile up first.
const first = createStatusService(config, { nc, db, logger });
await first.start();
await first.close();

const account = randomUUID();
const key = randomUUID();
for (let i = 0; i < ENDPOINTS; i++) {
  await db
    .insertInto('webhook_endpoints')
    .values({
      id: randomUUID(),
      account_id: account,
      url: 'https://93.184.215.14/hooks',
      events: [...WEBHOOK_EVENT_TYPES],
      secret_sealed: 'unused: nothing is sent',
      previous_secret_sealed: null,
      previous_until: null,
      disabled_at: null,
      disabled_reason: null,
      failing_since: null,
    })
    .execute();
}
const at = Date.now();
const natsBeforePublish = natsCpuMs();
let pending: unknown[] = [];
let published = 0;
const publish = (record: unknown) => {
  if (PER_MESSAGE <= 1) {
    nc.publish(`rt.status.${account}`, JSON.stringify(record));
    published++;
    return;
  }
  pending.push(record);
  if (pending.length >= PER_MESSAGE) flushPending();
};
const flushPending = () => {
  if (pending.length === 0) return;
  nc.publish(`rt.status.${account}`, JSON.stringify({ v: 1, records: pending }));
  pending = [];
  published++;
};
for (let i = 0; i < N; i++) {
  const id = `${i}-${account}`;
  const delivered = i % 2 === 1;
  publish({
    v: 1,
    id,
    account_id: account,
    key_id: key,
    recipient: randomUUID(),
    status: 'pending',
    at,
  });
  if (delivered) {
    publish({ v: 1, id, account_id: account, status: 'delivered', at: at + 1 });
  }
  if (i % 10_000 === 0) await nc.flush();
}
flushPending();
await nc.flush();
const jsm = await nc.jetstreamManager();
// JetStream stores what the server received asynchronously: wait until every message is in.
let info = await jsm.streams.info('HERALD_STATUS');
while (info.state.messages < published) {
  await new Promise((r) => setTimeout(r, 50));
  info = await jsm.streams.info('HERALD_STATUS');
}
const records = N + Math.floor(N / 2);
const natsPublishMs = natsCpuMs() - natsBeforePublish;
const messages = info.state.messages;

const started = performance.now();
const cpuBefore = process.cpuUsage();
const natsBeforeDrain = natsCpuMs();
const pgBeforeDrain = pgCpuMs();
const service = createStatusService(config, { nc, db, logger });
await service.start();
for (;;) {
  info = await jsm.streams.info('HERALD_STATUS');
  if (info.state.messages === 0) break;
  await new Promise((r) => setTimeout(r, 50));
}
const seconds = (performance.now() - started) / 1000;
const cpu = process.cpuUsage(cpuBefore);
const natsDrainMs = natsCpuMs() - natsBeforeDrain;
const pgDrainMs = pgCpuMs() - pgBeforeDrain;
const rows = await db
  .selectFrom('status_events')
  .select((eb) => eb.fn.countAll<string>().as('n'))
  .executeTakeFirstOrThrow();
const messagesQueued = await db
  .selectFrom('webhook_messages')
  .select((eb) => eb.fn.countAll<string>().as('n'))
  .executeTakeFirstOrThrow();
process.stdout.write(
  `${JSON.stringify({
    records,
    messages,
    per_message: PER_MESSAGE,
    event_rows: Number(rows.n),
    batch_max: Number(BATCH),
    seconds: Number(seconds.toFixed(2)),
    records_per_s: Math.round(records / seconds),
    cpu_ms: Math.round((cpu.user + cpu.system) / 1000),
    nats_cpu_ms: { publish: natsPublishMs, drain: natsDrainMs },
    pg_cpu_ms: pgDrainMs,
    webhook_endpoints: ENDPOINTS,
    webhook_messages: Number(messagesQueued.n),
  })}\n`,
);
await service.close();
await nc.close();
await db.destroy();
await Promise.all([nats.stop(), pg.stop()]);
