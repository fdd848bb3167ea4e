import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { queueStreamConfig } from '@herald/queue';
import { KOA_STREAM, KOA_SUBJECTS, koaSubject } from '../baselines/names.js';
import { declare, PeerCollector, peerRows, type System } from '../report/peers.js';
import {
  type FigureResult,
  formatNumber,
  RowCollector,
  ratioAtLeast,
  valueCheck,
} from '../report/results.js';
import { percentile } from '../stats.js';
import { publishBody } from './centrifugo-wire.js';
import type { BenchContext, CentrifugoPeer } from './context.js';
import { centrifugoProcesses, centrifugoSystem, meterCpu, PROCESSES } from './cpu-meter.js';
import { metered, natsRssBytes, publishMany, type StoreOutcome, storeOne } from './drain-store.js';
import {
  centrifugoReconnect,
  connectStorm,
  floorReconnect,
  heraldQueue,
  reconnect,
  replay,
} from './drain-storm.js';
import { notifyBody } from './herald-wire.js';
import { queueEvents, resetQueue } from './queue-prep.js';

export const SUBJECTS = {
  herald: 'Herald socket-edge (herald.v1, client acks)',
  raw: 'baseline: nats.js ordered-consumer replay',
  /** (b)'s sockets alone: the same load generator opening as many TLS WebSockets at once. */
  connects: 'baseline: raw ws server, the same connects (no events)',
  /** DESIGN.md's drain with none of Herald's work: raw ws sockets, a durable consumer each. */
  floor: 'baseline: design floor, raw ws + durable consumer, acked on write',
  /** Herald's store: `POST /notify` to a recipient nobody connected, each answered 202. */
  heraldStore: 'Herald POST /notify → 202 (stored)',
  /** The floor's store: the koa + zod + nats.js service of figure 3. */
  floorStore: 'baseline: design floor, koa + JetStream POST /notify → 202',
  centrifugo: (engine: string) => `baseline: Centrifugo (${engine} engine), connect with recover`,
  centrifugoStore: (engine: string) =>
    `baseline: Centrifugo (${engine} engine) POST /api/publish (history)`,
} as const;

const systemOf = (peer: CentrifugoPeer): System => centrifugoSystem(peer.engine);
const processesOf = (peer: CentrifugoPeer) => centrifugoProcesses(peer.engine);

const NO_STORE =
  'Socket.IO and the raw ws server keep nothing for an absent recipient, so they have no value here';

/**
 * Figure 4: draining queued events on reconnect, through Herald's herald.v1 framing (what the SDK
 * speaks: every event acked by the client) against a raw ordered consumer replaying the same
 * stored messages. (a) one recipient with a deep queue; (b) many recipients reconnecting at once.
 */
export async function drain(ctx: BenchContext): Promise<FigureResult> {
  const started = performance.now();
  const { config } = ctx;
  const rows = new RowCollector('4');
  const peers = new PeerCollector('4');
  const row = peerRows(config);
  const notes: string[] = [];
  let seqBase = 0;
  const n = config.drainOne;
  const m = config.drainMany;
  const each = config.drainEach;
  const oneMetric = `(a) events/s, 1 recipient × ${n.toLocaleString('en-US')} queued`;
  const manyP50 = `(b) p50 time to caught up, ${m.toLocaleString('en-US')} × ${each}`;
  const manyP99 = `(b) p99 time to caught up, ${m.toLocaleString('en-US')} × ${each}`;
  const manyDelivered = `(b) delivered / expected, ${m.toLocaleString('en-US')} × ${each}`;
  const natsCpu = '(b) nats-server CPU per queued recipient, Herald drain';
  const natsRss = '(b) nats-server RSS growth per queued recipient (events + consumer)';
  const oneCpu = '(a) server CPU per delivered event';
  const manyCpu = '(b) server CPU per delivered event';
  const openP50 = `(b) p50 time to socket open, ${m.toLocaleString('en-US')} × ${each}`;
  const openP99 = `(b) p99 time to socket open, ${m.toLocaleString('en-US')} × ${each}`;
  const afterOpenP99 = `(b) p99 time from socket open to caught up, ${m.toLocaleString('en-US')} × ${each}`;

  const storeMetric = `(a) events/s stored, 1 recipient × ${n.toLocaleString('en-US')}`;
  const storeCpu = '(a) server CPU per stored event';
  // Figure 3 left its offline events in the stream; every run starts from an empty queue. The
  // design floor stores into figure 3's koa stream (its configuration is the queue's).
  await resetQueue(ctx);
  await ctx.jsm.streams.add({
    ...queueStreamConfig(),
    name: KOA_STREAM,
    subjects: [KOA_SUBJECTS],
  } as Parameters<typeof ctx.jsm.streams.add>[0]);
  try {
    for (let run = 0; run < config.runs; run++) {
      ctx.checkDeadline();
      // (a) one deep queue, stored through each system's own API (issue 31's store row), then
      // drained on connect.
      const one = randomUUID();
      const storeRow = (
        subject: string,
        role: 'herald' | 'baseline',
        system: System,
        out: StoreOutcome,
      ) => {
        rows.add(storeMetric, subject, role, 'events/s', out.rate);
        rows.add(storeCpu, subject, role, 'µs', out.cpuPerEventUs);
        peers.add(declare(peers, row.store, NO_STORE), system, out.rate);
        peers.add(declare(peers, row.storeCpu), system, out.cpuPerEventUs, out.split);
        if (out.stored < n)
          notes.push(
            `(a) run ${run + 1}: ${subject} stored ${out.stored} of ${n} (${out.firstError ?? 'time bound reached'})`,
          );
      };
      const payloadOf = (i: number) => ctx.payload.make(seqBase + i);
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
      seqBase += n;
      const rawOne = await metered(ctx, PROCESSES.nats, () => replay(ctx, [one], n));
      const rawRate = rawOne.delivered / ((rawOne.times[0] ?? Number.NaN) / 1000);
      rows.add(oneMetric, SUBJECTS.raw, 'baseline', 'events/s', rawRate);
      rows.add(oneCpu, SUBJECTS.raw, 'baseline', 'µs', rawOne.cpuPerEventUs);
      const heraldOne = await metered(ctx, PROCESSES.herald, () => reconnect(ctx, [one], n));
      const heraldRate = heraldOne.delivered / ((heraldOne.times[0] ?? Number.NaN) / 1000);
      rows.add(oneMetric, SUBJECTS.herald, 'herald', 'events/s', heraldRate);
      rows.add(oneCpu, SUBJECTS.herald, 'herald', 'µs', heraldOne.cpuPerEventUs);
      peers.add(declare(peers, row.drain, NO_STORE), 'herald', heraldRate);
      peers.add(declare(peers, row.drainCpu), 'herald', heraldOne.cpuPerEventUs, heraldOne.split);
      for (const peer of ctx.centrifugo) {
        const c = await metered(ctx, processesOf(peer), () =>
          centrifugoReconnect(ctx, peer, [one], n),
        );
        const rate = c.delivered / ((c.times[0] ?? Number.NaN) / 1000);
        rows.add(oneMetric, SUBJECTS.centrifugo(peer.engine), 'baseline', 'events/s', rate);
        rows.add(oneCpu, SUBJECTS.centrifugo(peer.engine), 'baseline', 'µs', c.cpuPerEventUs);
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
      rows.add(oneMetric, SUBJECTS.floor, 'baseline', 'events/s', floorRate);
      rows.add(oneCpu, SUBJECTS.floor, 'baseline', 'µs', floorOne.cpuPerEventUs);
      peers.add(declare(peers, row.drain), 'designFloor', floorRate);
      peers.add(declare(peers, row.drainCpu), 'designFloor', floorOne.cpuPerEventUs);
      await resetQueue(ctx);
      await ctx.jsm.streams.purge(KOA_STREAM);

      // (b) many recipients at once.
      const many = Array.from({ length: m }, () => randomUUID());
      const phases: string[] = [];
      let t = performance.now();
      const phase = (name: string) => {
        phases.push(`${name} ${((performance.now() - t) / 1000).toFixed(1)} s`);
        t = performance.now();
      };
      const rssBefore = await natsRssBytes(ctx);
      await queueEvents(ctx, many, each, seqBase);
      seqBase += m * each;
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
      await queueEvents(ctx, many, each, seqBase);
      seqBase += m * each;
      phase('queue again');
      const floorMany = await metered(ctx, PROCESSES.floorDrain, () =>
        floorReconnect(ctx, many, each, heraldQueue(ctx)),
      );
      phase('design floor drain');
      // Centrifugo: the same storm against each engine, the events published beforehand.
      const centrifugoMany: Array<[CentrifugoPeer, Awaited<ReturnType<typeof metered>>]> = [];
      for (const peer of ctx.centrifugo) {
        await publishMany(ctx, peer, many, each, seqBase);
        centrifugoMany.push([
          peer,
          await metered(ctx, processesOf(peer), () => centrifugoReconnect(ctx, peer, many, each)),
        ]);
      }
      seqBase += m * each;
      phase('Centrifugo storms');
      rows.add(natsCpu, SUBJECTS.herald, 'herald', 'ms', (1000 * cpuSeconds) / m);
      if (rssBefore !== undefined && rssAfter !== undefined)
        rows.add(natsRss, SUBJECTS.herald, 'herald', 'KB', (rssAfter - rssBefore) / 1024 / m);
      for (const [subject, role, r, system] of [
        [SUBJECTS.raw, 'baseline', rawMany, undefined],
        [SUBJECTS.herald, 'herald', heraldMany, 'herald'],
        [SUBJECTS.floor, 'baseline', floorMany, 'designFloor'],
        ...centrifugoMany.map(
          ([peer, r]) =>
            [SUBJECTS.centrifugo(peer.engine), 'baseline' as const, r, systemOf(peer)] as const,
        ),
      ] as const) {
        rows.add(manyP50, subject, role, 'ms', percentile(r.times, 50));
        rows.add(manyP99, subject, role, 'ms', percentile(r.times, 99));
        rows.add(manyDelivered, subject, role, '%', (100 * r.delivered) / (m * each));
        rows.add(manyCpu, subject, role, 'µs', r.cpuPerEventUs);
        if (system) {
          peers.add(declare(peers, row.storm, NO_STORE), system, percentile(r.times, 99));
          peers.add(declare(peers, row.stormCpu), system, r.cpuPerEventUs, r.split);
        }
      }
      for (const [subject, role, r] of [
        [SUBJECTS.herald, 'herald', heraldMany],
        [SUBJECTS.floor, 'baseline', floorMany],
      ] as const) {
        if (r.openTimes) {
          rows.add(openP50, subject, role, 'ms', percentile(r.openTimes, 50));
          rows.add(openP99, subject, role, 'ms', percentile(r.openTimes, 99));
        }
        if (r.afterOpenTimes)
          rows.add(afterOpenP99, subject, role, 'ms', percentile(r.afterOpenTimes, 99));
        if (r.failedConnects > 0)
          notes.push(
            `(b) run ${run + 1}: ${r.failedConnects} of ${m} ${subject} connects failed (${r.firstError})`,
          );
      }
      rows.add(openP50, SUBJECTS.connects, 'baseline', 'ms', percentile(rawOpens, 50));
      rows.add(openP99, SUBJECTS.connects, 'baseline', 'ms', percentile(rawOpens, 99));
      await resetQueue(ctx);
      phase('cleanup');
      ctx.log(
        `figure 4: run ${run + 1}/${config.runs}: (a) Herald ${formatNumber(heraldRate)}/s vs raw ${formatNumber(rawRate)}/s, design floor ${formatNumber(floorRate)}/s; (b) Herald p99 ${formatNumber(percentile(heraldMany.times, 99))} ms, ${heraldMany.delivered}/${m * each} delivered, design floor p99 ${formatNumber(percentile(floorMany.times, 99))} ms${centrifugoMany.map(([peer, r]) => `, ${peer.server.name} p99 ${formatNumber(percentile(r.times, 99))} ms`).join('')} (${phases.join(', ')})`,
      );
    }
  } finally {
    await ctx.jsm.streams.delete(KOA_STREAM).catch(() => false);
  }
  return {
    id: '4',
    title: 'Drain on reconnect',
    rows: rows.rows(),
    checks: [
      ratioAtLeast(
        '4',
        '(a) Herald ≥ 0.5× raw ordered replay',
        rows.median(oneMetric, SUBJECTS.herald),
        rows.median(oneMetric, SUBJECTS.raw),
        0.5,
      ),
      valueCheck(
        '4',
        '(b) 100% delivered',
        rows.median(manyDelivered, SUBJECTS.herald),
        '%',
        (v) => v === 100,
      ),
      valueCheck(
        '4',
        '(b) p99 ≤ 2 s',
        rows.median(manyP99, SUBJECTS.herald),
        'ms',
        (v) => v <= 2000,
      ),
    ],
    ratios: [
      rows.ratio(`${oneMetric}: Herald ÷ raw replay`, oneMetric, SUBJECTS.herald, SUBJECTS.raw),
      rows.ratio(
        `${oneMetric}: design floor ÷ raw replay`,
        oneMetric,
        SUBJECTS.floor,
        SUBJECTS.raw,
      ),
      rows.ratio(`${oneMetric}: Herald ÷ design floor`, oneMetric, SUBJECTS.herald, SUBJECTS.floor),
    ],
    peers: peers.lines(),
    notes,
    elapsedMs: performance.now() - started,
  };
}
