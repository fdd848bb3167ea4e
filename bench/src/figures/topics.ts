import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import {
  type FigureResult,
  formatNumber,
  RowCollector,
  ratioCheckAtMost,
  valueCheck,
} from '../report/results.js';
import type { BenchContext } from './context.js';
import {
  ConnectedMembers,
  type FanoutRun,
  makeTopic,
  offlineFanout,
  statusSettled,
} from './topic-fanout.js';
import { DirectLoad, type DirectWindow } from './topic-p99.js';

/** Issue 44's bound: `/notify`'s p99 while a large fan-out runs, against without one. */
const P99_TARGET = 2;
/** A topic event's payload sequence numbers, far from the direct events' (the probe's). */
const TOPIC_SEQ_BASE = 2_000_000_000;
/** How often the fan-out beside the direct events has its stored copies counted, ms. */
const LOADED_POLL_MS = 1000;

/** A count as the subjects write it: 50, 20,000. */
const count = (v: number) => v.toLocaleString('en-US');

export const SUBJECTS = {
  offline: (n: number) => `Herald, topic of ${count(n)} offline members (copies stored)`,
  offlineLoaded: (n: number) =>
    `Herald, topic of ${count(n)} offline members, beside the direct events`,
  connected: (m: number) =>
    `Herald, topic of ${count(m)} connected members (copies at the sockets, acked)`,
  quiet: 'Herald POST /notify, no fan-out running',
  during: (n: number) => `Herald POST /notify, during a fan-out to ${count(n)} members`,
} as const;

export const METRICS = {
  rate: 'members/s, POST to the last copy',
  cpu: 'Herald CPU per member (every process, POST to the last copy)',
  missing: 'copies missing (members without one)',
  twice: 'copies beyond one per member',
  answerP99: (r: number) => `p99 POST /notify answer @ ${count(r)} events/s`,
  arrivalP99: (r: number) => `p99 dispatch to socket @ ${count(r)} events/s`,
} as const;

/**
 * Figure 10: topics (issue 44). A topic of BENCH_TOPIC_MEMBERS members nobody connected (each
 * copy stored in the offline queue) and one of BENCH_TOPIC_CONNECTED members with a herald.v1
 * socket each: members per second from the `POST /notify` with `topic` to the last copy, Herald's
 * CPU per member, every copy counted. Then direct events at BENCH_TOPIC_RATE to connected
 * recipients, without a fan-out and during one to the offline topic, in the same run: their p99.
 */
export async function topics(ctx: BenchContext): Promise<FigureResult> {
  const started = performance.now();
  const { config } = ctx;
  const n = config.topicMembers;
  const m = config.topicConnected;
  const r = config.topicRate;
  const rows = new RowCollector('10');
  const notes: string[] = [
    'No peer runs this figure: Centrifugo\u2019s channels (and Pusher\u2019s) are live-only broadcasts that store nothing for an offline member, so the baseline of the p99 rows is Herald itself without the fan-out, side by side in the same run.',
    'The CPU rows meter every Herald process from the POST to the last copy stored or acked; the status records of the copies written after that are not in them.',
  ];
  const suffix = randomUUID().slice(0, 8);
  const offlineTopic = `bench.offline.${suffix}`;
  const connectedTopic = `bench.connected.${suffix}`;
  const connected = new ConnectedMembers(ctx, m);
  const direct = new DirectLoad(ctx);
  let seq = TOPIC_SEQ_BASE;
  const fanoutRows = (subject: string, f: FanoutRun, run: number) => {
    rows.add(METRICS.rate, subject, 'herald', 'members/s', f.members / (f.elapsedMs / 1000));
    rows.add(METRICS.cpu, subject, 'herald', 'µs', (1e6 * f.cpuSeconds) / f.members);
    rows.add(METRICS.missing, subject, 'herald', 'copies', f.tally.missing);
    rows.add(METRICS.twice, subject, 'herald', 'copies', f.tally.duplicates);
    if (f.tally.missing > 0)
      notes.push(
        `${subject}, run ${run + 1}: ${f.tally.missing} of ${f.members} members had no copy after ${config.topicSettleMs} ms (BENCH_TOPIC_SETTLE_MS)`,
      );
  };
  const directRows = (subject: string, w: DirectWindow, run: number) => {
    rows.add(METRICS.answerP99(r), subject, 'herald', 'ms', w.answerP99);
    rows.add(METRICS.arrivalP99(r), subject, 'herald', 'ms', w.arrivalP99);
    if (w.failed > 0 || w.missing > 0)
      notes.push(
        `${subject}, run ${run + 1}: ${w.failed} of ${w.sent + w.failed} failed${w.firstError ? ` (${w.firstError})` : ''}, ${w.missing} never arrived`,
      );
    if (w.stored > 0)
      notes.push(
        `${subject}, run ${run + 1}: ${w.stored} direct events were stored (202), not live`,
      );
    if (w.behindMs > 5)
      notes.push(
        `${subject}, run ${run + 1}: the generator fell ${w.behindMs.toFixed(0)} ms behind its schedule`,
      );
  };
  try {
    const offlineMembers = Array.from({ length: n }, () => randomUUID());
    await makeTopic(ctx, offlineTopic, offlineMembers);
    await makeTopic(ctx, connectedTopic, connected.members);
    await connected.open();
    await direct.open();
    for (let run = 0; run < config.runs; run++) {
      ctx.checkDeadline();
      // Each step starts once the one before it settled (every copy's status record written).
      const settle = async (f: FanoutRun, what: string) => {
        if (!(await statusSettled(ctx, f.id, f.members)))
          notes.push(
            `run ${run + 1}: the ${what} fan-out's status records were not all written within ${config.topicSettleMs} ms`,
          );
      };
      const offline = await offlineFanout(ctx, offlineTopic, n, seq++);
      fanoutRows(SUBJECTS.offline(n), offline, run);
      await settle(offline, 'offline');
      const live = await connected.fanout(ctx, connectedTopic, seq++);
      fanoutRows(SUBJECTS.connected(m), live, run);
      await settle(live, 'connected');
      // The p99 windows last about as long as the fan-out alone did, so the second one runs
      // inside the fan-out it measures (a note says when the fan-out ended first).
      const windowMs = Math.min(
        config.topicSettleMs,
        Math.max(config.measureMs, 0.6 * offline.elapsedMs),
      );
      const quiet = await direct.window(windowMs);
      directRows(SUBJECTS.quiet, quiet, run);
      // Read once a second beside the direct events, not every 50 ms: the reads (one request per
      // partition stream) would load nats-server and the generator in this window only, not in
      // the one it is compared with (the generator fell up to 125 ms behind in it).
      const fanout = offlineFanout(
        ctx,
        offlineTopic,
        n,
        seq++,
        () => direct.stored,
        LOADED_POLL_MS,
      );
      const during = await direct.window(windowMs, fanout);
      const loaded = await fanout;
      directRows(SUBJECTS.during(n), during, run);
      fanoutRows(SUBJECTS.offlineLoaded(n), loaded, run);
      await settle(loaded, 'second offline');
      if (loaded.elapsedMs < windowMs)
        notes.push(
          `run ${run + 1}: the fan-out beside the direct events ended after ${loaded.elapsedMs.toFixed(0)} ms, before the ${windowMs.toFixed(0)} ms window did`,
        );
      ctx.log(
        `figure 10: run ${run + 1}/${config.runs}: offline ${formatNumber(n / (offline.elapsedMs / 1000))} members/s, connected ${formatNumber(m / (live.elapsedMs / 1000))} members/s, /notify p99 ${formatNumber(quiet.answerP99)} → ${formatNumber(during.answerP99)} ms during the fan-out`,
      );
    }
  } finally {
    await Promise.all([connected.fleet.close(), direct.fleet.close()]);
  }
  const answer = rows.ratio(
    `${METRICS.answerP99(r)}: during the fan-out ÷ without`,
    METRICS.answerP99(r),
    SUBJECTS.during(n),
    SUBJECTS.quiet,
  );
  const arrival = rows.ratio(
    `${METRICS.arrivalP99(r)}: during the fan-out ÷ without`,
    METRICS.arrivalP99(r),
    SUBJECTS.during(n),
    SUBJECTS.quiet,
  );
  const lost = (subject: string) =>
    rows
      .rows()
      .filter((x) => x.metric === METRICS.missing && x.subject === subject)
      .reduce((sum, x) => sum + x.runs.reduce((a, b) => a + b, 0), 0);
  return {
    id: '10',
    title: 'Topics: fan-out to every member',
    rows: rows.rows(),
    checks: [
      ratioCheckAtMost(
        '10',
        `/notify p99 during a fan-out to ${count(n)} members: ≤ ${P99_TARGET}× without`,
        answer,
        P99_TARGET,
      ),
      ...[SUBJECTS.offline(n), SUBJECTS.connected(m), SUBJECTS.offlineLoaded(n)].map((s) =>
        valueCheck(
          '10',
          `${s}: every member a copy (every run)`,
          lost(s),
          'missing',
          (v) => v === 0,
        ),
      ),
    ],
    ratios: [answer, arrival],
    notes,
    elapsedMs: performance.now() - started,
  };
}
