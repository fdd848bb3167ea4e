/**
 * Measures what publishing status records costs, one message per record (before issue 11's
 * batching: `Buffer.from(JSON.stringify(record))` through the dispatch path's TurnPublisher) beside
 * one StatusBatch message per turn (StatusBatcher), at PER_TURN records per event-loop turn. CPU
 * of this process (the publisher) and of the private nats-server (from /proc, Linux), per record,
 * with the HERALD_STATUS stream storing the records (STREAM=1, as in production) or with nothing
 * subscribed (STREAM=0, as in `make bench`, which runs no status service). Not a test (no
 * assertions).
 *
 *   node --conditions=herald-source --import tsx services/ingress-api/test/measure/status-publish-cost.ts
 */
import { randomUUID } from 'node:crypto';
import { TurnPublisher } from '@herald/nats';
import { type StatusEvent, statusStreamConfig, subjects } from '@herald/proto';
import { StatusBatcher } from '@herald/status-client';
import { childCpuMs, startNatsServer } from '@herald/testkit';
import { connect, type StreamConfig } from 'nats';

const RECORDS = Number(process.env.RECORDS ?? 100_000);
const PER_TURN = (process.env.PER_TURN ?? '1,8,64').split(',').map(Number);
const STREAM = process.env.STREAM !== '0';

/** CPU ms of the nats-server this process started (its child). */
const natsCpuMs = () => childCpuMs('nats-server');

const nats = await startNatsServer();
const nc = await connect(nats.connectOptions());
const jsm = await nc.jetstreamManager();
if (STREAM) {
  await jsm.streams.add(statusStreamConfig() as unknown as StreamConfig);
}
const account = randomUUID();
const key = randomUUID();
const turn = () => new Promise((r) => setImmediate(r));

const record = (i: number): StatusEvent => ({
  v: 1,
  id: `${i}-${randomUUID()}`,
  account_id: account,
  key_id: key,
  recipient: `user-${i % 1000}`,
  at: Date.now(),
  status: 'pending',
});

async function measure(kind: 'single' | 'batch', perTurn: number) {
  const publisher = new TurnPublisher(nc);
  const batcher = new StatusBatcher(publisher);
  const records = Array.from({ length: RECORDS }, (_, i) => record(i));
  await nc.flush();
  const natsBefore = natsCpuMs();
  const cpuBefore = process.cpuUsage();
  for (let i = 0; i < RECORDS; i += perTurn) {
    for (let j = i; j < Math.min(i + perTurn, RECORDS); j++) {
      const r = records[j] as StatusEvent;
      if (kind === 'single') {
        publisher.publish(subjects.status(r.account_id), Buffer.from(JSON.stringify(r)));
      } else {
        batcher.add(r);
      }
    }
    await turn();
  }
  await nc.flush();
  const cpu = process.cpuUsage(cpuBefore);
  if (STREAM) {
    // The server stores what it received asynchronously: wait until the stream has it all.
    const want = kind === 'single' ? RECORDS : Math.ceil(RECORDS / Math.min(perTurn, 256));
    for (;;) {
      const info = await jsm.streams.info(statusStreamConfig().name);
      if (info.state.messages >= want) break;
      await new Promise((r) => setTimeout(r, 20));
    }
  }
  const natsMs = natsCpuMs() - natsBefore;
  if (STREAM) await jsm.streams.purge(statusStreamConfig().name);
  return {
    kind,
    per_turn: perTurn,
    publisher_us_per_record: Number((((cpu.user + cpu.system) / RECORDS) * 1).toFixed(2)),
    nats_us_per_record: Number(((natsMs * 1000) / RECORDS).toFixed(2)),
  };
}

for (const perTurn of PER_TURN) {
  // Alternating, twice each: the first pass also warms the JIT.
  for (const kind of ['single', 'batch', 'batch', 'single'] as const) {
    process.stdout.write(
      `${JSON.stringify({ stream: STREAM, ...(await measure(kind, perTurn)) })}\n`,
    );
  }
}
await nc.close();
await nats.stop();
