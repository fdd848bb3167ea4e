import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { declare } from '../report/peers.js';
import { formatNumber } from '../report/results.js';
import { percentile } from '../stats.js';
import type { BenchContext, CentrifugoPeer } from './context.js';
import { meterCpu, PROCESSES } from './cpu-meter.js';
import {
  countRows,
  type DrainRun,
  NO_STORE,
  processesOf,
  SUBJECTS,
  systemOf,
} from './drain-rows.js';
import { metered, natsRssBytes, publishMany } from './drain-store.js';
import {
  centrifugoReconnect,
  connectStorm,
  floorReconnect,
  heraldQueue,
  reconnect,
  replay,
} from './drain-storm.js';
import { queueEvents, resetQueue } from './queue-prep.js';

/**
 * Figure 4 (b): many recipients reconnecting at once, each with a few queued events, through
 * every system (Herald's without a device, and with the SDK's default client: every socket with a
 * device, issue 42), and what nats-server holds and spends per queued recipient for Herald.
 * Leaves the queue empty. The run's log line for (b).
 */
export async function drainMany(ctx: BenchContext, out: DrainRun): Promise<string> {
  const { config } = ctx;
  const { rows, peers, row, notes, metric, run, seq } = out;
  const m = config.drainMany;
  const each = config.drainEach;
  const many = Array.from({ length: m }, () => randomUUID());
  const phases: string[] = [];
  let t = performance.now();
  const phase = (name: string) => {
    phases.push(`${name} ${((performance.now() - t) / 1000).toFixed(1)} s`);
    t = performance.now();
  };
  const rssBefore = await natsRssBytes(ctx);
  await queueEvents(ctx, many, each, seq.next);
  seq.next += m * each;
  phase('queue');
  const rawMany = await metered(ctx, PROCESSES.nats, () => replay(ctx, many, each));
  phase('raw replay');
  const rawOpens = await connectStorm(ctx, many);
  phase('raw ws connects');
  // Herald's drain metered twice over: every server process (CPU per delivered event) and
  // nats-server alone (its cost per queued recipient).
  const { result: heraldMany, cpuSeconds } = await meterCpu(ctx.servers, PROCESSES.nats, () =>
    metered(ctx, PROCESSES.herald, () => reconnect(ctx, many, each)),
  );
  phase('Herald drain');
  // With every recipient's events stored and its durable consumer created (the state a storm
  // leaves until retention's run): what nats-server holds per recipient.
  const rssAfter = await natsRssBytes(ctx);
  // The design floor's storm on the same events, after Herald's consumers are gone, so
  // nats-server holds one consumer per recipient for it as it did for Herald.
  await resetQueue(ctx);
  await queueEvents(ctx, many, each, seq.next);
  seq.next += m * each;
  phase('queue again');
  const floorMany = await metered(ctx, PROCESSES.floorDrain, () =>
    floorReconnect(ctx, many, each, heraldQueue(ctx)),
  );
  phase('design floor drain');
  // The SDK's default client: fresh recipients, each socket a first device of its recipient.
  await resetQueue(ctx);
  const withDevice = Array.from({ length: m }, () => randomUUID());
  await queueEvents(ctx, withDevice, each, seq.next);
  seq.next += m * each;
  phase('queue again');
  const deviceMany = await metered(ctx, PROCESSES.herald, () =>
    reconnect(ctx, withDevice, each, { device: `phone-${randomUUID()}` }),
  );
  phase('Herald drain with devices');
  // Centrifugo: the same storm against each engine, the events published beforehand.
  const centrifugoMany: Array<[CentrifugoPeer, Awaited<ReturnType<typeof metered>>]> = [];
  for (const peer of ctx.centrifugo) {
    await publishMany(ctx, peer, many, each, seq.next);
    centrifugoMany.push([
      peer,
      await metered(ctx, processesOf(peer), () => centrifugoReconnect(ctx, peer, many, each)),
    ]);
  }
  seq.next += m * each;
  phase('Centrifugo storms');
  rows.add(metric.natsCpu, SUBJECTS.herald, 'herald', 'ms', (1000 * cpuSeconds) / m);
  if (rssBefore !== undefined && rssAfter !== undefined)
    rows.add(metric.natsRss, SUBJECTS.herald, 'herald', 'KB', (rssAfter - rssBefore) / 1024 / m);
  const deviceSubject = SUBJECTS.heraldDevice('every socket a first device');
  for (const [subject, role, r, system] of [
    [SUBJECTS.raw, 'baseline', rawMany, undefined],
    [SUBJECTS.herald, 'herald', heraldMany, 'herald'],
    [deviceSubject, 'herald', deviceMany, undefined],
    [SUBJECTS.floor, 'baseline', floorMany, 'designFloor'],
    ...centrifugoMany.map(
      ([peer, r]) =>
        [SUBJECTS.centrifugo(peer.engine), 'baseline' as const, r, systemOf(peer)] as const,
    ),
  ] as const) {
    rows.add(metric.manyP50, subject, role, 'ms', percentile(r.times, 50));
    rows.add(metric.manyP99, subject, role, 'ms', percentile(r.times, 99));
    // Centrifugo's history was filled by batches in flight at once: no order to hold it to.
    countRows(out, 'many', subject, role, r, m * each, !subject.startsWith('baseline: Centrifugo'));
    rows.add(metric.manyCpu, subject, role, 'µs', r.cpuPerEventUs);
    if (system) {
      peers.add(declare(peers, row.storm, NO_STORE), system, percentile(r.times, 99));
      peers.add(declare(peers, row.stormCpu), system, r.cpuPerEventUs, r.split);
    }
    // The device line: Herald's storm with devices beside the same run's peers.
    const device = system === 'herald' ? deviceMany : r;
    if (system && system !== 'designFloor') {
      peers.add(declare(peers, row.stormDevice, NO_STORE), system, percentile(device.times, 99));
      const split = system === 'herald' ? device.split : undefined;
      peers.add(declare(peers, row.stormDeviceCpu), system, device.cpuPerEventUs, split);
    }
  }
  for (const [subject, role, r] of [
    [SUBJECTS.herald, 'herald', heraldMany],
    [deviceSubject, 'herald', deviceMany],
    [SUBJECTS.floor, 'baseline', floorMany],
  ] as const) {
    if (r.openTimes) {
      rows.add(metric.openP50, subject, role, 'ms', percentile(r.openTimes, 50));
      rows.add(metric.openP99, subject, role, 'ms', percentile(r.openTimes, 99));
    }
    if (r.afterOpenTimes)
      rows.add(metric.afterOpenP99, subject, role, 'ms', percentile(r.afterOpenTimes, 99));
    if (r.failedConnects > 0)
      notes.push(
        `(b) run ${run + 1}: ${r.failedConnects} of ${m} ${subject} connects failed (${r.firstError})`,
      );
  }
  rows.add(metric.openP50, SUBJECTS.connects, 'baseline', 'ms', percentile(rawOpens, 50));
  rows.add(metric.openP99, SUBJECTS.connects, 'baseline', 'ms', percentile(rawOpens, 99));
  await resetQueue(ctx);
  phase('cleanup');
  return `(b) Herald p99 ${formatNumber(percentile(heraldMany.times, 99))} ms, ${heraldMany.delivered}/${m * each} delivered, with devices p99 ${formatNumber(percentile(deviceMany.times, 99))} ms, ${deviceMany.delivered}/${m * each} delivered (${deviceMany.duplicates} twice, ${deviceMany.outOfOrder} out of order), design floor p99 ${formatNumber(percentile(floorMany.times, 99))} ms${centrifugoMany.map(([peer, r]) => `, ${peer.server.name} p99 ${formatNumber(percentile(r.times, 99))} ms`).join('')} (${phases.join(', ')})`;
}
