// The consumer question on the running cluster (docs/architecture-history.md, "A recipient's
// consumer on the cluster"): what an R1 and an R3 durable consumer cost on an R3 stream. Runs
// inside a one-off container of the Herald image on the cluster's network (NATS is not published):
//
//   NATS_PASSWORD=$(sed -n 's/^HERALD_NATS_PASSWORD_ADMIN=//p' deploy/cluster/.env) \
//   scripts/cluster.sh run --rm --no-deps -T -v "$PWD/test/cluster/measure:/measure:ro" \
//     -e NATS_USER=herald-admin -e NATS_PASSWORD ingress-1 node /measure/consumers.mjs [COUNT]
//
// As the operator (herald-admin): its scratch stream's subjects are no Herald service's.
//
// With `queued COUNT`: the memory each node holds per recipient with one event waiting (COUNT
// subjects of one event each in the R3 stream, no consumer: what an offline recipient costs).
// With `loss` instead of COUNT: one R1 consumer of a recipient with 5 stored events, its node
// printed as `LEADER nats-N`; then, for 90 s, whether a fetch from it works, once a second
// (kill that node meanwhile: test/cluster/measure/r1-loss.sh does it all).
//
// For each replica count it makes COUNT consumers configured as socket-edge makes a recipient's
// (lib/queue's queueConsumerConfig: explicit ack, memory state, one filter subject each) on a
// scratch R3 stream holding one event per recipient, and prints the create time (one at a time,
// then 16 at once) and each node's resident memory before and after (/varz), then deletes them.
import { createRequire } from 'node:module';

const require = createRequire('/app/services/ingress-api/');
const { connect } = require('nats');

const LOSS = process.argv[2] === 'loss';
const QUEUED = process.argv[2] === 'queued';
const COUNT = LOSS ? 0 : Number(process.argv[QUEUED ? 3 : 2] ?? 1000);
const STREAM = 'MEASURE_CONSUMERS';
const NODES = ['nats-1', 'nats-2', 'nats-3'];
const nc = await connect({
  servers: process.env.NATS_URL.split(','),
  user: process.env.NATS_USER,
  pass: process.env.NATS_PASSWORD,
  tls: { caFile: process.env.NATS_CA_FILE },
});
const jsm = await nc.jetstreamManager({ timeout: 30_000 });
const js = nc.jetstream();

async function rss() {
  const out = {};
  for (const n of NODES) {
    const v = await (await fetch(`http://${n}:8222/varz`)).json();
    out[n] = v.mem;
  }
  return out;
}
const settle = () => new Promise((r) => setTimeout(r, 5000));

await jsm.streams.delete(STREAM).catch(() => undefined);
await jsm.streams.add({
  name: STREAM,
  subjects: ['measure.>'],
  storage: 'file',
  num_replicas: 3,
});
for (let i = 0; i < COUNT; i++) await js.publish(`measure.${i}`, new Uint8Array(64));

if (LOSS) {
  await lossWatch();
  process.exit(0);
}
if (QUEUED) {
  await queuedCost();
  process.exit(0);
}

const config = (i, replicas) => ({
  durable_name: `m_${replicas}_${i}`,
  filter_subject: `measure.${i}`,
  ack_policy: 'explicit',
  deliver_policy: 'all',
  ack_wait: 1_000_000_000,
  max_ack_pending: 64,
  max_deliver: -1,
  mem_storage: true,
  num_replicas: replicas,
});

for (const replicas of [1, 3]) {
  await settle();
  const before = await rss();
  const half = Math.floor(COUNT / 2);
  const t0 = performance.now();
  for (let i = 0; i < half; i++) await jsm.consumers.add(STREAM, config(i, replicas));
  const serialMs = (performance.now() - t0) / half;
  const t1 = performance.now();
  for (let i = half; i < COUNT; i += 16) {
    const batch = [];
    for (let j = i; j < Math.min(COUNT, i + 16); j++)
      batch.push(jsm.consumers.add(STREAM, config(j, replicas)));
    await Promise.all(batch);
  }
  const rate = (COUNT - half) / ((performance.now() - t1) / 1000);
  await settle();
  const after = await rss();
  const perNode = Object.fromEntries(
    NODES.map((n) => [n, Math.round((after[n] - before[n]) / COUNT)]),
  );
  console.log(
    JSON.stringify({
      replicas,
      consumers: COUNT,
      createOneAtATimeMs: Number(serialMs.toFixed(1)),
      createdPerSecond16AtOnce: Math.round(rate),
      bytesPerConsumerPerNode: perNode,
    }),
  );
  for (let i = 0; i < COUNT; i++) await jsm.consumers.delete(STREAM, `m_${replicas}_${i}`);
}
await jsm.streams.delete(STREAM);
await nc.drain();

async function lossWatch() {
  for (let i = 0; i < 5; i++) await js.publish('measure.loss', new Uint8Array(64));
  const info = await jsm.consumers.add(STREAM, {
    durable_name: 'loss_r1',
    filter_subject: 'measure.loss',
    ack_policy: 'explicit',
    deliver_policy: 'all',
    ack_wait: 1_000_000_000,
    mem_storage: true,
    num_replicas: 1,
  });
  console.log(`LEADER ${info.cluster?.leader?.replace(/^herald-/, '')}`);
  const started = Date.now();
  let last = '';
  while (Date.now() - started < 90_000) {
    let state;
    try {
      const c = await js.consumers.get(STREAM, 'loss_r1');
      const got = [];
      for await (const m of await c.fetch({ max_messages: 5, expires: 1000 })) got.push(m.seq);
      state = `fetch ok (${got.length} events)`;
    } catch (err) {
      state = `fetch fails: ${String(err).slice(0, 100)}`;
    }
    if (state !== last) console.log(`${((Date.now() - started) / 1000).toFixed(1)} s: ${state}`);
    last = state;
    await new Promise((r) => setTimeout(r, 1000));
  }
  await jsm.streams.delete(STREAM);
  await nc.drain();
}

async function queuedCost() {
  await settle();
  const before = await rss();
  const pending = [];
  for (let i = 0; i < COUNT; i++) {
    pending.push(js.publish(`measure.q.${i}`, new Uint8Array(256)));
    if (pending.length >= 256) await Promise.all(pending.splice(0));
  }
  await Promise.all(pending);
  await settle();
  const after = await rss();
  const perNode = Object.fromEntries(
    NODES.map((n) => [n, Math.round((after[n] - before[n]) / COUNT)]),
  );
  console.log(
    JSON.stringify({ queuedRecipients: COUNT, eventBytes: 256, bytesPerRecipientPerNode: perNode }),
  );
  await jsm.streams.delete(STREAM);
  await nc.drain();
}
