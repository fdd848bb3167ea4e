/**
 * Re-measures, on the nats-server Herald pins, each NATS fact the code relies on (DESIGN.md
 * section 3 was measured on Debian's 2.9.10). Run: `npm run -s nats-facts -w @herald/bench`
 * (or `node --conditions=herald-source --import tsx bench/nats-facts.ts`). Prints one JSON
 * object; docs/architecture-history.md records the figures. Bounded: a private server on
 * loopback, a fixed number of operations, stops by itself.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { launchNats, natsServerBinary, stopProcess } from '@herald/testkit';
import {
  AckPolicy,
  type ConsumerConfig,
  connect,
  DiscardPolicy,
  headers,
  type JetStreamClient,
  type JetStreamManager,
  type NatsConnection,
  RetentionPolicy,
  StorageType,
} from 'nats';

const CONSUMERS = Number(process.env.FACTS_CONSUMERS ?? 1000);
const ROUND_TRIPS = Number(process.env.FACTS_ROUND_TRIPS ?? 5000);
const PUBLISHES = Number(process.env.FACTS_PUBLISHES ?? 20000);

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const rssKiB = (pid: number) =>
  Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0);
const duKiB = (dir: string) => Number(execFileSync('du', ['-sk', dir]).toString().split('\t')[0]);
const quantile = (xs: number[], q: number) =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(q * xs.length))] ?? 0;
const round = (x: number, digits = 3) => Number(x.toFixed(digits));

async function stream(jsm: JetStreamManager, name: string, extra: Record<string, unknown> = {}) {
  await jsm.streams.add({
    name,
    subjects: [`${name}.>`],
    retention: RetentionPolicy.Limits,
    storage: StorageType.File,
    ...extra,
  });
}

const pull = (name: string, filter: string, extra: Partial<ConsumerConfig> = {}) => ({
  durable_name: name,
  filter_subject: filter,
  ack_policy: AckPolicy.Explicit,
  ack_wait: 1_000_000_000,
  ...extra,
});

/** Durable consumer cost: create time, server RSS and disk per consumer. */
async function consumerCost(
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

/** Does a purge below the ack floor keep the consumer's ack-pending messages (2.9.10 lost them)? */
async function purgeKeepsAckPending(jsm: JetStreamManager, js: JetStreamClient) {
  await stream(jsm, 'PURGE');
  for (let i = 1; i <= 6; i++) await js.publish('PURGE.r', new TextEncoder().encode(String(i)));
  await jsm.consumers.add('PURGE', pull('p', 'PURGE.r'));
  const consumer = await js.consumers.get('PURGE', 'p');
  const got = await consumer.fetch({ max_messages: 4, expires: 2000 });
  const msgs = [];
  for await (const m of got) msgs.push(m);
  // Ack 1 and 2: the floor is 2; 3 and 4 stay ack-pending.
  for (const m of msgs.slice(0, 2)) await m.ackAck();
  const info = await jsm.consumers.info('PURGE', 'p');
  await jsm.streams.purge('PURGE', { filter: 'PURGE.r', seq: info.ack_floor.stream_seq + 1 });
  for (const m of msgs.slice(2)) m.nak();
  const again = await consumer.fetch({ max_messages: 4, expires: 3000 });
  const seen: number[] = [];
  for await (const m of again) {
    seen.push(m.seq);
    m.ack();
  }
  return {
    ack_floor_before: info.ack_floor.stream_seq,
    redelivered_after_purge: seen,
    keeps_ack_pending: seen.includes(3) && seen.includes(4),
  };
}

/** Is a durable with unacked messages reaped by inactive_threshold? */
async function inactiveThresholdReaps(jsm: JetStreamManager, js: JetStreamClient) {
  await stream(jsm, 'IDLE');
  await js.publish('IDLE.r', new Uint8Array(1));
  await jsm.consumers.add('IDLE', pull('i', 'IDLE.r', { inactive_threshold: 1_000_000_000 }));
  const consumer = await js.consumers.get('IDLE', 'i');
  for await (const _ of await consumer.fetch({ max_messages: 1, expires: 1000 })) {
    // leave it unacked
  }
  await sleep(4000);
  const exists = await jsm.consumers.info('IDLE', 'i').then(
    () => true,
    () => false,
  );
  return { reaped_with_unacked_messages: !exists };
}

/** How many messages consume() pulls ahead with max_messages 10 before any ack. */
async function consumePrefetch(jsm: JetStreamManager, js: JetStreamClient) {
  await stream(jsm, 'PRE');
  for (let i = 0; i < 100; i++) await js.publish('PRE.r', new Uint8Array(8));
  // A long ack_wait, so what is counted is the pull-ahead, not redeliveries.
  await jsm.consumers.add('PRE', pull('f', 'PRE.r', { ack_wait: 30_000_000_000 }));
  const consumer = await js.consumers.get('PRE', 'f');
  const messages = await consumer.consume({ max_messages: 10 });
  let delivered = 0;
  const done = (async () => {
    for await (const _ of messages) delivered++;
  })();
  await sleep(1500);
  const info = await jsm.consumers.info('PRE', 'f');
  await messages.close();
  await done;
  return { max_messages: 10, delivered_without_ack: delivered, ack_pending: info.num_ack_pending };
}

/**
 * How long one filtered purge holds the stream (2.9.10: 240 ms at 200,000 events over 10,000
 * subjects, which is why retention deletes acked events one by one), against one message delete.
 */
async function purgeCost(jsm: JetStreamManager, js: JetStreamClient) {
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

async function noResponders(nc: NatsConnection) {
  const times: number[] = [];
  for (let i = 0; i < 500; i++) {
    const t0 = performance.now();
    await nc.request('nobody.listens', new Uint8Array(1), { timeout: 1000 }).catch((err) => err);
    times.push(performance.now() - t0);
  }
  return { p50_ms: round(quantile(times, 0.5)) };
}

async function requestReply(nc: NatsConnection) {
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

async function discardNewPerSubject(jsm: JetStreamManager, js: JetStreamClient) {
  await stream(jsm, 'CAP', {
    max_msgs_per_subject: 2,
    discard: DiscardPolicy.New,
    discard_new_per_subject: true,
  });
  await js.publish('CAP.r', new Uint8Array(1));
  await js.publish('CAP.r', new Uint8Array(1));
  const err = await js.publish('CAP.r', new Uint8Array(1)).then(
    () => undefined,
    (e: { api_error?: { err_code?: number }; code?: string; message?: string }) => e,
  );
  return {
    third_publish_refused: err !== undefined,
    err_code: err?.api_error?.err_code ?? err?.code,
  };
}

async function msgIdDedup(jsm: JetStreamManager, js: JetStreamClient) {
  await stream(jsm, 'DUP');
  const a = await js.publish('DUP.r', new Uint8Array(1), { msgID: 'acct:k1' });
  const b = await js.publish('DUP.r', new Uint8Array(1), { msgID: 'acct:k1' });
  const info = await jsm.streams.info('DUP');
  return {
    second_is_duplicate: b.duplicate,
    same_seq: a.seq === b.seq,
    window_s: info.config.duplicate_window / 1e9,
  };
}

/** Per-message TTL (server >= 2.11 with allow_msg_ttl): what per-key KV expiry can build on. */
async function perMessageTtl(jsm: JetStreamManager, js: JetStreamClient) {
  try {
    await stream(jsm, 'TTL', { allow_msg_ttl: true });
  } catch (err) {
    return { supported: false, error: String(err) };
  }
  const h = headers();
  h.set('Nats-TTL', '1s');
  await js.publish('TTL.r', new Uint8Array(1), { headers: h });
  await js.publish('TTL.keep', new Uint8Array(1));
  await sleep(2500);
  const info = await jsm.streams.info('TTL');
  return { supported: true, messages_left_after_ttl: info.state.messages };
}

async function publishRates(js: JetStreamClient, jsm: JetStreamManager) {
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

async function main(): Promise<void> {
  const { bin, version } = await natsServerBinary();
  const store = mkdtempSync(join(tmpdir(), 'herald-nats-facts-'));
  const portsDir = join(store, 'ports');
  mkdirSync(portsDir);
  const { proc, port } = await launchNats(bin, ['-js', '-sd', join(store, 'js')], { portsDir });
  const nc = await connect({ servers: `127.0.0.1:${port}`, noAsyncTraces: true });
  try {
    const jsm = await nc.jetstreamManager();
    const js = nc.jetstream();
    const pid = proc.pid as number;
    const facts = {
      nats_server: version,
      consumer_cost: await consumerCost(jsm, js, pid, join(store, 'js')),
      purge_below_ack_floor: await purgeKeepsAckPending(jsm, js),
      purge_cost: await purgeCost(jsm, js),
      inactive_threshold: await inactiveThresholdReaps(jsm, js),
      consume_prefetch: await consumePrefetch(jsm, js),
      no_responders: await noResponders(nc),
      request_reply: await requestReply(nc),
      discard_new_per_subject: await discardNewPerSubject(jsm, js),
      msg_id_dedup: await msgIdDedup(jsm, js),
      per_message_ttl: await perMessageTtl(jsm, js),
      jetstream_publish: await publishRates(js, jsm),
    };
    process.stdout.write(`${JSON.stringify(facts, null, 2)}\n`);
  } finally {
    await nc.close();
    await stopProcess(proc);
    rmSync(store, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`nats-facts failed: ${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
