import { performance } from 'node:perf_hooks';
import type { JetStreamClient, JetStreamManager, NatsConnection } from 'nats';
import { duKiB, pull, quantile, round, rssKiB, sleep, stream } from './helpers.js';

/* What NATS operations Herald's design counts on cost on the pinned server: time, memory, disk. */

const CONSUMERS = Number(process.env.FACTS_CONSUMERS ?? 1000);
const ROUND_TRIPS = Number(process.env.FACTS_ROUND_TRIPS ?? 5000);
const PUBLISHES = Number(process.env.FACTS_PUBLISHES ?? 20000);

/** Durable consumer cost: create time, server RSS and disk per consumer. */
export async function consumerCost(
  jsm: JetStreamManager,
  js: JetStreamClient,
  pid: number,
  store: string,
) {
  await stream(jsm, 'COST');
  for (let i = 0; i < CONSUMERS; i++) await js.publish(`COST.r${i}`, new Uint8Array(16));
  const rss0 = rssKiB(pid);
  const disk0 = duKiB(store);
  const t0 = performance.now();
  for (let i = 0; i < CONSUMERS; i++) await jsm.consumers.add('COST', pull(`c${i}`, `COST.r${i}`));
  const ms = performance.now() - t0;
  await sleep(500);
  return {
    consumers: CONSUMERS,
    create_ms_each: round(ms / CONSUMERS),
    rss_kib_each: round((rssKiB(pid) - rss0) / CONSUMERS, 1),
    disk_kib_each: round((duKiB(store) - disk0) / CONSUMERS, 1),
  };
}

/**
 * How long one filtered purge holds the stream, against one message delete: why retention deletes
 * acked events one by one (docs/architecture-history.md, "NATS facts on the pinned server").
 */
export async function purgeCost(jsm: JetStreamManager, js: JetStreamClient) {
  const events = Number(process.env.FACTS_PURGE_EVENTS ?? 200_000);
  const subjectsCount = 10_000;
  await stream(jsm, 'SPAN');
  const payload = new Uint8Array(200);
  const inflight: Promise<unknown>[] = [];
  for (let i = 0; i < events; i++) {
    inflight.push(js.publish(`SPAN.r${i % subjectsCount}`, payload));
    if (inflight.length >= 512) await Promise.all(inflight.splice(0));
  }
  await Promise.all(inflight);
  const purges: number[] = [];
  for (let r = 0; r < 20; r++) {
    const t0 = performance.now();
    await jsm.streams.purge('SPAN', { filter: `SPAN.r${r}`, seq: events / 2 });
    purges.push(performance.now() - t0);
  }
  const deletes: number[] = [];
  for (let seq = events - 20; seq < events; seq++) {
    const t0 = performance.now();
    await jsm.streams.deleteMessage('SPAN', seq, false);
    deletes.push(performance.now() - t0);
  }
  return {
    events,
    subjects: subjectsCount,
    filtered_purge_p50_ms: round(quantile(purges, 0.5)),
    filtered_purge_max_ms: round(Math.max(...purges)),
    delete_p50_ms: round(quantile(deletes, 0.5)),
  };
}

export async function noResponders(nc: NatsConnection) {
  const times: number[] = [];
  for (let i = 0; i < 500; i++) {
    const t0 = performance.now();
    await nc.request('nobody.listens', new Uint8Array(1), { timeout: 1000 }).catch((err) => err);
    times.push(performance.now() - t0);
  }
  return { p50_ms: round(quantile(times, 0.5)) };
}

export async function requestReply(nc: NatsConnection) {
  const sub = nc.subscribe('echo');
  (async () => {
    for await (const m of sub) m.respond(m.data);
  })();
  const times: number[] = [];
  for (let i = 0; i < ROUND_TRIPS; i++) {
    const t0 = performance.now();
    await nc.request('echo', new Uint8Array(64));
    times.push(performance.now() - t0);
  }
  sub.unsubscribe();
  return { p50_ms: round(quantile(times, 0.5)), p99_ms: round(quantile(times, 0.99)) };
}

export async function publishRates(js: JetStreamClient, jsm: JetStreamManager) {
  await stream(jsm, 'RATE');
  const payload = new Uint8Array(256);
  const sync = Math.min(PUBLISHES, 5000);
  let t0 = performance.now();
  for (let i = 0; i < sync; i++) await js.publish(`RATE.r${i % 100}`, payload);
  const syncRate = sync / ((performance.now() - t0) / 1000);
  t0 = performance.now();
  const inflight: Promise<unknown>[] = [];
  for (let i = 0; i < PUBLISHES; i++) {
    inflight.push(js.publish(`RATE.r${i % 100}`, payload));
    if (inflight.length >= 256) await Promise.all(inflight.splice(0));
  }
  await Promise.all(inflight);
  const asyncRate = PUBLISHES / ((performance.now() - t0) / 1000);
  return { sync_per_s: Math.round(syncRate), pipelined_per_s: Math.round(asyncRate) };
}
