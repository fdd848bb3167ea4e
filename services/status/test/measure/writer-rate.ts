/**
 * Measures the rows per second the status writer sustains: N status records (half `pending`, then
 * half of those `delivered`, the way real traffic mixes them) are published into the status
 * stream while the writer is stopped, then the writer is started and timed until every record
 * is in Postgres. Not a test (no assertions): the figure in docs/architecture.md comes from it.
 *
 *   node --conditions=herald-source --import tsx services/status/test/measure/writer-rate.ts
 */
import { randomUUID } from 'node:crypto';
import { createDb, createLogger } from '@herald/kit';
import { startNatsServer, startPostgres } from '@herald/testkit';
import { connect } from 'nats';
import {
  createStatusService,
  loadConfig,
  migrateToLatest,
  type StatusDb,
} from '../../src/index.js';

const N = Number(process.env.RECORDS ?? 100_000);
const BATCH = process.env.STATUS_BATCH_MAX ?? '1000';

const [nats, pg] = await Promise.all([startNatsServer(), startPostgres()]);
const db = createDb<StatusDb>(pg.url, 5);
await migrateToLatest(db);
const nc = await connect({ servers: nats.url });
const config = loadConfig({
  NATS_URL: nats.url,
  DATABASE_URL: pg.url,
  TLS_DISABLED: 'true',
  STATUS_BATCH_MAX: BATCH,
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
const at = Date.now();
for (let i = 0; i < N; i++) {
  const id = `${i}-${account}`;
  const delivered = i % 2 === 1;
  nc.publish(
    `rt.status.${account}`,
    JSON.stringify({
      v: 1,
      id,
      account_id: account,
      key_id: key,
      recipient: randomUUID(),
      status: 'pending',
      at,
    }),
  );
  if (delivered) {
    nc.publish(
      `rt.status.${account}`,
      JSON.stringify({ v: 1, id, account_id: account, status: 'delivered', at: at + 1 }),
    );
  }
  if (i % 10_000 === 0) await nc.flush();
}
await nc.flush();
const jsm = await nc.jetstreamManager();
// JetStream stores what the server received asynchronously: wait until every record is in.
let info = await jsm.streams.info('HERALD_STATUS');
while (info.state.messages < N * 1.5) {
  await new Promise((r) => setTimeout(r, 50));
  info = await jsm.streams.info('HERALD_STATUS');
}
const records = info.state.messages;

const started = performance.now();
const service = createStatusService(config, { nc, db, logger });
await service.start();
for (;;) {
  info = await jsm.streams.info('HERALD_STATUS');
  if (info.state.messages === 0) break;
  await new Promise((r) => setTimeout(r, 50));
}
const seconds = (performance.now() - started) / 1000;
const rows = await db
  .selectFrom('status_events')
  .select((eb) => eb.fn.countAll<string>().as('n'))
  .executeTakeFirstOrThrow();
process.stdout.write(
  `${JSON.stringify({
    records,
    event_rows: Number(rows.n),
    batch_max: Number(BATCH),
    seconds: Number(seconds.toFixed(2)),
    records_per_s: Math.round(records / seconds),
  })}\n`,
);
await service.close();
await nc.close();
await db.destroy();
await Promise.all([nats.stop(), pg.stop()]);
