// Measurement (docs/benchmarks-history.md, "Figure 4b: nats-server's consumer state writes"); run from the
// repository root with
//   MEM=0|1 WPI=0|1 taskset -c 1 node --conditions=herald-source --import tsx <this file>
// nats-server CPU of 2,000 recipients x 20 queued drained the way the
// edge drains them (MSG.GET, CONSUMER.CREATE, consume 32/16, hold each delivery HOLD ms with
// working() every 333 ms, then ack), with the consumer state on file (default) or in memory.
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { subjects } from '@herald/proto';
import { QueueLayout, queueConsumerConfig, queueStreamConfig } from '@herald/queue';
import { type ConsumerConfig, connect, type JsMsg, type StreamConfig } from 'nats';

const MEM = process.env.MEM === '1';
const WPI = process.env.WPI !== '0';
const N = Number(process.env.N ?? 2000);
const EACH = Number(process.env.EACH ?? 20);
const HOLD = Number(process.env.HOLD ?? 1500);
const port = 20000 + Math.floor(Math.random() * 20000);
const store = mkdtempSync(join(tmpdir(), 'statecost-'));
const proc = spawn(
  'taskset',
  ['-c', '0', 'nats-server', '-js', '-sd', store, '-a', '127.0.0.1', '-p', String(port)],
  {
    stdio: 'ignore',
  },
);
process.on('exit', () => proc.kill());
const cpu = () => {
  const f = readFileSync(`/proc/${proc.pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
  // ticks of the child's pid: utime(12) + stime(13) counting from field 3 -> indexes 11, 12
  return (Number(f[11]) + Number(f[12])) / 100;
};
await new Promise((r) => setTimeout(r, 800));
const nc = await connect({ servers: `127.0.0.1:${port}` });
const jsm = await nc.jetstreamManager({ timeout: 60_000 });
const js = nc.jetstream();
const layout = new QueueLayout();
for (let p = 0; p < layout.partitions; p++)
  await jsm.streams.add(queueStreamConfig({}, layout, p) as unknown as Partial<StreamConfig>);
const account = randomUUID();
const recipients = Array.from({ length: N }, () => randomUUID());
const payload = new TextEncoder().encode(JSON.stringify({ x: 'y'.repeat(200) }));
const pubs: Promise<unknown>[] = [];
for (const r of recipients)
  for (let i = 0; i < EACH; i++) {
    pubs.push(js.publish(subjects.queue(account, r), payload));
    if (pubs.length >= 256) await Promise.all(pubs.splice(0));
  }
await Promise.all(pubs);
const c0 = cpu();
const t0 = performance.now();
let acked = 0;
let slots = 32;
const waiting: (() => void)[] = [];
const take = async () => {
  if (slots > 0) slots--;
  else await new Promise<void>((r) => waiting.push(r));
};
const give = () => {
  const next = waiting.shift();
  if (next) next();
  else slots++;
};
const held = new Set<JsMsg>();
const keepAlive = setInterval(() => {
  if (WPI) for (const m of held) m.working();
}, 333);
const dec = new TextEncoder();
const runs: { stop(): void }[] = [];
await Promise.all(
  recipients.map(async (r) => {
    const stream = layout.streamOf(account, r);
    await take();
    try {
      await nc.request(
        `$JS.API.STREAM.MSG.GET.${stream}`,
        dec.encode(JSON.stringify({ last_by_subj: subjects.queue(account, r) })),
        { timeout: 60_000 },
      );
      const cfg = queueConsumerConfig(account, r, { ackWaitMs: 1000, maxAckPending: 64 });
      const info = await jsm.consumers.add(stream, {
        ...(cfg as unknown as Partial<ConsumerConfig>),
        ...(MEM ? { mem_storage: true } : {}),
      });
      const consumer = js.consumers.getPullConsumerFor(info);
      const run = await consumer.consume({
        max_messages: 32,
        threshold_messages: 16,
        callback: (m) => {
          held.add(m);
          setTimeout(() => {
            held.delete(m);
            m.ack();
            acked++;
          }, HOLD * Math.random());
        },
      });
      runs.push(run);
    } finally {
      give();
    }
  }),
);
while (acked < N * EACH) await new Promise((r) => setTimeout(r, 20));
await nc.flush();
const wall = performance.now() - t0;
await new Promise((r) => setTimeout(r, 300));
const used = cpu() - c0;
clearInterval(keepAlive);
for (const run of runs) run.stop();
console.log(
  JSON.stringify({
    mem: MEM,
    wpi: WPI,
    n: N,
    each: EACH,
    holdMs: HOLD,
    wallMs: Math.round(wall),
    natsCpuS: used,
    natsCpuPerRecipientMs: +((1000 * used) / N).toFixed(2),
  }),
);
await nc.close();
proc.kill();
await new Promise((r) => setTimeout(r, 300));
rmSync(store, { recursive: true, force: true });
process.exit(0);
