import { performance } from 'node:perf_hooks';
import { openFilesLimit } from '../env/fd-limit.js';
import { declare, PeerCollector, peerRows } from '../report/peers.js';
import {
  type Check,
  type FigureResult,
  RowCollector,
  ratioAtLeast,
  ratioAtMost,
  ratioBelow,
} from '../report/results.js';
import type { BenchContext } from './context.js';
import { ramp, rampLevels } from './ramp.js';
import { rampSubjects, SUBJECTS } from './ramp-subjects.js';

export { SUBJECTS } from './ramp-subjects.js';

/** What issue 31's memory line holds, at the level it is read. */
const memoryNote = (level: number) =>
  `RSS growth per connection at ${level.toLocaleString('en-US')} idle connections: the process holding the sockets (Node servers after forced GCs; Centrifugo as it stands), plus nats-server's growth for Herald and redis-server's for the Redis engine; the design floor holds its sockets in the raw ws server, so it has no line of its own`;

/** Descriptors the load generator keeps for itself (NATS, HTTP pools, the probe, stdio). */
const FD_RESERVE = 500;

/**
 * Figures 5 and 6 share one ramp per server: idle connections are added step by step; at each
 * step a 1 msg/s probe (an event pushed to one more socket through the server's dispatch path)
 * must keep its p99 under the bound and every accept must succeed, and at the figure 5 levels the
 * server's memory is read through its inspector after a forced GC.
 */
export async function connectionRamps(ctx: BenchContext): Promise<FigureResult[]> {
  const started = performance.now();
  const { config } = ctx;
  const want5 = config.figures.has('5');
  const want6 = config.figures.has('6');
  const mem = new RowCollector('5');
  const peers = new PeerCollector('5');
  const row = peerRows(config);
  const cap = new RowCollector('6');
  const notes5: string[] = [
    'RSS and heap: the server process after two forced full GCs (V8 inspector), minus the same reading before the ramp, divided by the connections. Kernel: the server end of each connection, its socket buffers (`ss -m`) plus the slab objects every TCP socket costs (tcp_sock, inode, file, dentry, epoll entry); the objects are the same whichever server holds the socket.',
  ];
  const notes6: string[] = [];
  const fdLimit = openFilesLimit();
  let capacityMax = config.capacityMax;
  if (fdLimit !== undefined && capacityMax > fdLimit - FD_RESERVE) {
    capacityMax = fdLimit - FD_RESERVE;
    notes6.push(
      `Ramps stop at ${capacityMax.toLocaleString('en-US')} connections: the open-files limit here is ${fdLimit.toLocaleString('en-US')} per process (ulimit -n, not raisable in this container), and it binds the load generator and every server process alike.`,
    );
  }
  const memoryLevels = want5 ? config.memoryLevels.filter((l) => l <= capacityMax) : [];
  const subjectsToRun = rampSubjects(ctx, want5);

  for (let run = 0; run < config.rampRuns; run++) {
    for (const subject of subjectsToRun) {
      ctx.checkDeadline();
      const levels5 = subject.firstLevelOnly ? memoryLevels.slice(0, 1) : memoryLevels;
      const top = want6 && subject.probe ? capacityMax : (levels5.at(-1) ?? 0);
      if (top === 0) continue;
      const levels = rampLevels(levels5, want6 && subject.probe ? config.capacityStep : 0, top);
      const outcome = await ramp(ctx, subject, levels, levels5, want6);
      if (want5) {
        mem.add(
          'server CPU per connection (connect)',
          subject.name,
          subject.role,
          'µs',
          1e6 * outcome.cpuPerAccept,
        );
        if (subject.name === SUBJECTS.heraldDevice)
          peers.add(
            declare(peers, row.connectDevice),
            'herald',
            1e6 * outcome.cpuPerAccept,
            outcome.cpuSplitUs,
          );
        if (subject.system) {
          peers.add(
            declare(peers, row.connect),
            subject.system,
            1e6 * outcome.cpuPerAccept,
            outcome.cpuSplitUs,
          );
          // Issue 42's line: the SDK's default client, beside the same run's peers.
          if (subject.system !== 'herald')
            peers.add(
              declare(peers, row.connectDevice),
              subject.system,
              1e6 * outcome.cpuPerAccept,
            );
          const top = outcome.memory.get(memoryLevels.at(-1) ?? -1);
          if (top)
            peers.add(
              declare(peers, row.memory, memoryNote(memoryLevels.at(-1) ?? 0)),
              subject.system,
              top.rss / (memoryLevels.at(-1) ?? 1) / 1000,
            );
        }
      }
      for (const [level, m] of outcome.memory) {
        const per = (v: number) => v / level;
        const at = level.toLocaleString('en-US');
        mem.add(`RSS per connection @ ${at}`, subject.name, subject.role, 'bytes', per(m.rss));
        mem.add(`heap per connection @ ${at}`, subject.name, subject.role, 'bytes', per(m.heap));
        mem.add(
          `kernel memory per connection (server end) @ ${at}`,
          subject.name,
          subject.role,
          'bytes',
          per(m.kernel),
        );
      }
      if (want6 && subject.probe) {
        cap.add(
          'connections held with probe p99 ≤ bound',
          subject.name,
          subject.role,
          'connections',
          outcome.healthy,
        );
        cap.add(
          'accept rate while ramping',
          subject.name,
          subject.role,
          'connections/s',
          outcome.acceptRate,
        );
        cap.add(
          'server CPU per accepted connection',
          subject.name,
          subject.role,
          'µs',
          1e6 * outcome.cpuPerAccept,
        );
        cap.add(
          'probe p99 at the last healthy step',
          subject.name,
          subject.role,
          'ms',
          outcome.lastP99,
        );
        notes6.push(`${subject.name}, run ${run + 1}: ${outcome.stoppedBy}`);
      }
      ctx.log(
        `figures 5/6: run ${run + 1}/${config.rampRuns}, ${subject.name}: ${outcome.healthy} connections, ${Math.round(outcome.acceptRate)}/s accepted; ${outcome.stoppedBy}`,
      );
    }
  }

  const results: FigureResult[] = [];
  if (want5) {
    const checks: Check[] = memoryLevels.flatMap((level) => {
      const at = level.toLocaleString('en-US');
      const rss = `RSS per connection @ ${at}`;
      const heap = `heap per connection @ ${at}`;
      const h = (metric: string) => mem.median(metric, SUBJECTS.herald);
      // Issue 11's targets: heap ≤ 1.5× raw ws, RSS below Socket.IO.
      return [
        ratioAtMost(
          '5',
          `heap @ ${at}: Herald ≤ 1.5× raw ws`,
          h(heap),
          mem.median(heap, SUBJECTS.raw),
          1.5,
        ),
        ratioBelow(
          '5',
          `RSS @ ${at}: Herald below Socket.IO`,
          h(rss),
          mem.median(rss, SUBJECTS.socketIo),
        ),
      ];
    });
    results.push({
      id: '5',
      title: 'Memory per idle authenticated connection (after GC)',
      rows: mem.rows(),
      checks,
      peers: peers.lines(),
      notes: notes5,
      elapsedMs: performance.now() - started,
    });
  }
  if (want6) {
    const metric = 'connections held with probe p99 ≤ bound';
    const rate = 'accept rate while ramping';
    results.push({
      id: '6',
      title: `Connections per edge process (probe p99 ≤ ${config.probeP99Ms} ms, no failed accept)`,
      rows: cap.rows(),
      checks: [
        ratioAtLeast(
          '6',
          'connections: Herald ≥ 0.8× raw ws',
          cap.median(metric, SUBJECTS.herald),
          cap.median(metric, SUBJECTS.raw),
          0.8,
        ),
        ratioAtLeast(
          '6',
          'accept rate: Herald ≥ 0.8× raw ws',
          cap.median(rate, SUBJECTS.herald),
          cap.median(rate, SUBJECTS.raw),
          0.8,
        ),
      ],
      notes: notes6,
      elapsedMs: performance.now() - started,
    });
  }
  return results;
}
