// Measurement (docs/benchmarks-history.md, "Round 4: device catch-up in runs"); run from the
// repository root with
//   N=1000 node --conditions=herald-source --import tsx services/socket-edge/test/measure/device-read.ts
// How a device catch-up may read a recipient's N stored events (interleaved with another
// recipient's, so the subject has gaps) from a position, on one real nats-server, same run:
// STREAM.MSG.GET `next_by_subj` one at a time (the catch-up before round 4), batched
// DIRECT.GET (`batch`, ADR-31) in runs of RUNS, and an ordered consumer from the position. Only
// the reads: no socket, so the ratios say what the read costs; the absolute times are the machine's.
import { randomUUID } from 'node:crypto';
import { subjects } from '@herald/proto';
import { queueStreamOf } from '@herald/queue';
import { type MsgRequest, RequestStrategy } from 'nats';
import { ACCOUNT_A, queueEvent, startStack } from '../fixture.js';

const N = Number(process.env.N ?? 1000);
const ROUNDS = Number(process.env.ROUNDS ?? 5);
const RUNS = (process.env.RUNS ?? '64,256,1000').split(',').map(Number);

const stack = await startStack();
const recipient = randomUUID();
const stream = queueStreamOf(ACCOUNT_A, recipient);
const subject = subjects.queue(ACCOUNT_A, recipient);
const info = await stack.jsm.streams.info(stream);
await stack.jsm.streams.update(stream, { ...info.config, allow_direct: true });
// Another recipient of the same partition between each of ours: the subject's events have gaps.
let other = randomUUID();
while (queueStreamOf(ACCOUNT_A, other) !== stream) other = randomUUID();
for (let n = 0; n < N; n++) {
  await queueEvent(stack, ACCOUNT_A, recipient, `{"n":${n},"pad":"${'x'.repeat(100)}"}`);
  await queueEvent(stack, ACCOUNT_A, other, `{"n":${n}}`);
}

async function msgGetOneByOne(): Promise<number> {
  let seq = 0;
  let got = 0;
  for (;;) {
    try {
      const query = { next_by_subj: subject, seq: seq + 1 } as unknown as MsgRequest;
      const m = await stack.jsm.streams.getMessage(stream, query);
      seq = m.seq;
      got++;
    } catch {
      return got;
    }
  }
}

async function directBatches(run: number): Promise<number> {
  let seq = 0;
  let got = 0;
  for (;;) {
    const it = await stack.nc.requestMany(
      `$JS.API.DIRECT.GET.${stream}`,
      JSON.stringify({ seq: seq + 1, next_by_subj: subject, batch: run }),
      { strategy: RequestStrategy.SentinelMsg, maxWait: 5000 },
    );
    let pending = 0;
    for await (const m of it) {
      if (m.data.length === 0) {
        pending = Number(m.headers?.get('Nats-Num-Pending') || 0);
        break;
      }
      seq = Number(m.headers?.get('Nats-Sequence'));
      got++;
    }
    if (pending === 0) return got;
  }
}

async function orderedConsumer(): Promise<number> {
  const c = await stack.js.consumers.get(stream, { filterSubjects: [subject], opt_start_seq: 1 });
  let got = 0;
  const messages = await c.consume();
  for await (const m of messages) {
    got++;
    if (m.info.pending === 0) break;
  }
  await messages.close();
  return got;
}

const ways: [string, () => Promise<number>][] = [
  ['STREAM.MSG.GET one by one', msgGetOneByOne],
  ...RUNS.map(
    (run) =>
      [`DIRECT.GET batch ${run}`, () => directBatches(run)] as [string, () => Promise<number>],
  ),
  ['ordered consumer', orderedConsumer],
];
const times = new Map<string, number[]>(ways.map(([name]) => [name, []]));
for (let r = 0; r < ROUNDS; r++) {
  for (const [name, read] of ways) {
    const t0 = performance.now();
    const got = await read();
    const ms = performance.now() - t0;
    if (got !== N) throw new Error(`${name} read ${got} of ${N}`);
    times.get(name)?.push(ms);
  }
}
const median = (xs: number[]) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)] ?? 0;
const base = median(times.get('STREAM.MSG.GET one by one') ?? []);
console.log(
  `read ${N} stored events of one subject (gaps between), median of ${ROUNDS} (ms, ratio):`,
);
for (const [name, xs] of times)
  console.log(
    `  ${name.padEnd(28)} ${median(xs).toFixed(1).padStart(8)}  ${(median(xs) / base).toFixed(3)}`,
  );
await stack.stop();
