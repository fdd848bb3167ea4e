import { randomUUID } from 'node:crypto';
import { KOA_STREAM, koaSubject } from '../baselines/names.js';
import { declare, type System } from '../report/peers.js';
import { publishBody } from './centrifugo-wire.js';
import type { BenchContext } from './context.js';
import { PROCESSES } from './cpu-meter.js';
import { drainDevices, type PeerValue } from './drain-devices.js';
import {
  countRows,
  type DrainRun,
  NO_STORE,
  processesOf,
  SUBJECTS,
  systemOf,
} from './drain-rows.js';
import { metered, type StoreOutcome, storeOne } from './drain-store.js';
import { centrifugoReconnect, floorReconnect, reconnect, replay } from './drain-storm.js';
import { notifyBody } from './herald-wire.js';

/**
 * Figure 4 (a): one deep queue, stored through each system's own API (issue 31's store row), then
 * drained on connect by each, then by the SDK's default client (drain-devices.ts). Leaves the
 * queue and the design floor's stream empty. The drain rates, events/s, for the run's log line.
 * Every drain through a socket counts its ids; none counts order, the stores having had 64
 * requests in flight.
 */
export async function drainOne(
  ctx: BenchContext,
  out: DrainRun,
): Promise<{ herald: number; raw: number; floor: number; devices: string }> {
  const { config } = ctx;
  const { rows, peers, row, notes, metric, run } = out;
  const n = config.drainOne;
  const one = randomUUID();
  const storeRow = (
    subject: string,
    role: 'herald' | 'baseline',
    system: System,
    stored: StoreOutcome,
  ) => {
    rows.add(metric.storeMetric, subject, role, 'events/s', stored.rate);
    rows.add(metric.storeCpu, subject, role, 'µs', stored.cpuPerEventUs);
    peers.add(declare(peers, row.store, NO_STORE), system, stored.rate);
    peers.add(declare(peers, row.storeCpu), system, stored.cpuPerEventUs, stored.split);
    if (stored.stored < n)
      notes.push(
        `(a) run ${run + 1}: ${subject} stored ${stored.stored} of ${n} (${stored.firstError ?? 'time bound reached'})`,
      );
  };
  const base = out.seq.next;
  const payloadOf = (i: number) => ctx.payload.make(base + i);
  // Herald's body, to its ingress and to the floor's koa service alike.
  const notifyAt = (i: number): [string, string] => [
    '/notify',
    notifyBody(ctx.stack, one, payloadOf(i)),
  ];
  storeRow(
    SUBJECTS.heraldStore,
    'herald',
    'herald',
    await storeOne(ctx, PROCESSES.herald, ctx.http.ingress, n, 202, notifyAt),
  );
  for (const peer of ctx.centrifugo) {
    storeRow(
      SUBJECTS.centrifugoStore(peer.engine),
      'baseline',
      systemOf(peer),
      await storeOne(ctx, processesOf(peer), peer.api, n, 200, (i) => [
        '/api/publish',
        publishBody(one, payloadOf(i)),
      ]),
    );
  }
  storeRow(
    SUBJECTS.floorStore,
    'baseline',
    'designFloor',
    await storeOne(ctx, PROCESSES.floorStore, ctx.http.koaJetStream, n, 202, notifyAt),
  );
  out.seq.next += n;
  const rawOne = await metered(ctx, PROCESSES.nats, () => replay(ctx, [one], n));
  const rawRate = rawOne.delivered / ((rawOne.times[0] ?? Number.NaN) / 1000);
  rows.add(metric.oneMetric, SUBJECTS.raw, 'baseline', 'events/s', rawRate);
  rows.add(metric.oneCpu, SUBJECTS.raw, 'baseline', 'µs', rawOne.cpuPerEventUs);
  const heraldOne = await metered(ctx, PROCESSES.herald, () => reconnect(ctx, [one], n));
  const heraldRate = heraldOne.delivered / ((heraldOne.times[0] ?? Number.NaN) / 1000);
  rows.add(metric.oneMetric, SUBJECTS.herald, 'herald', 'events/s', heraldRate);
  rows.add(metric.oneCpu, SUBJECTS.herald, 'herald', 'µs', heraldOne.cpuPerEventUs);
  countRows(out, 'one', SUBJECTS.herald, 'herald', heraldOne, n, false);
  peers.add(declare(peers, row.drain, NO_STORE), 'herald', heraldRate);
  peers.add(declare(peers, row.drainCpu), 'herald', heraldOne.cpuPerEventUs, heraldOne.split);
  const peersOfRun: PeerValue[] = [];
  for (const peer of ctx.centrifugo) {
    const c = await metered(ctx, processesOf(peer), () => centrifugoReconnect(ctx, peer, [one], n));
    const rate = c.delivered / ((c.times[0] ?? Number.NaN) / 1000);
    rows.add(metric.oneMetric, SUBJECTS.centrifugo(peer.engine), 'baseline', 'events/s', rate);
    rows.add(metric.oneCpu, SUBJECTS.centrifugo(peer.engine), 'baseline', 'µs', c.cpuPerEventUs);
    countRows(out, 'one', SUBJECTS.centrifugo(peer.engine), 'baseline', c, n, false);
    peersOfRun.push({ system: systemOf(peer), rate, cpuPerEventUs: c.cpuPerEventUs });
    peers.add(declare(peers, row.drain), systemOf(peer), rate);
    peers.add(declare(peers, row.drainCpu), systemOf(peer), c.cpuPerEventUs);
    if (c.delivered < n)
      notes.push(
        `(a) run ${run + 1}: ${peer.server.name} replayed ${c.delivered} of ${n} within ${config.drainTimeoutMs / 1000} s`,
      );
  }
  if (heraldOne.delivered < n)
    notes.push(
      `(a) run ${run + 1}: Herald delivered ${heraldOne.delivered} of ${n} within ${config.drainTimeoutMs / 1000} s`,
    );
  // The design floor reads what its koa service stored, through a durable consumer of its own.
  const floorOne = await metered(ctx, PROCESSES.floorDrain, () =>
    floorReconnect(ctx, [one], n, { stream: () => KOA_STREAM, subject: koaSubject }),
  );
  const floorRate = floorOne.delivered / ((floorOne.times[0] ?? Number.NaN) / 1000);
  rows.add(metric.oneMetric, SUBJECTS.floor, 'baseline', 'events/s', floorRate);
  rows.add(metric.oneCpu, SUBJECTS.floor, 'baseline', 'µs', floorOne.cpuPerEventUs);
  countRows(out, 'one', SUBJECTS.floor, 'baseline', floorOne, n, false);
  peers.add(declare(peers, row.drain), 'designFloor', floorRate);
  peers.add(declare(peers, row.drainCpu), 'designFloor', floorOne.cpuPerEventUs);
  await ctx.jsm.streams.purge(KOA_STREAM);
  const devices = await drainDevices(ctx, out, peersOfRun);
  return { herald: heraldRate, raw: rawRate, floor: floorRate, devices };
}
