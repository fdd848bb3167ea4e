import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { centrifugoFleet } from '../load/centrifugo-fleet.js';
import { SioFleet } from '../load/sio-fleet.js';
import { WsFleet } from '../load/ws-fleet.js';
import { seqOfFrame, seqOfValue } from '../payload.js';
import { declare, PeerCollector, peerRows } from '../report/peers.js';
import {
  type Check,
  type FigureResult,
  formatNumber,
  RowCollector,
  ratioCheckAtLeast,
} from '../report/results.js';
import { type BenchContext, HANDSHAKE_TIMEOUT_MS, SETTLE_TIMEOUT_MS } from './context.js';
import { meterCpu, perUnitUs } from './cpu-meter.js';
import { DeliveryTracker } from './delivery-tracker.js';
import { connectUrl, rawWsUrl } from './herald-wire.js';
import { type Fleets, inFlight, SUBJECTS, targetsFor } from './online-targets.js';
import { measureWindow } from './online-window.js';

const metricOf = (n: number) => `deliveries/s, ${n.toLocaleString('en-US')} recipients`;
const cpuMetricOf = (n: number) =>
  `server CPU per delivery, ${n.toLocaleString('en-US')} recipients`;
const dupMetricOf = (n: number) =>
  `events delivered twice, ${n.toLocaleString('en-US')} recipients`;
const storedMetricOf = (n: number) =>
  `events to connected recipients answered 202, ${n.toLocaleString('en-US')} recipients`;

/**
 * Figure 2: online dispatch throughput. N recipients hold one socket each on every server; each
 * target is driven for a window with the same closed-loop client, and deliveries/s counts the
 * distinct events that reached the sockets (by their sequence numbers, so an event delivered
 * twice counts once, and as a duplicate). Targets are interleaved within each run so machine
 * drift hits all. One set of fleets grows through the sizes, so no socket is opened twice.
 */
export async function onlineThroughput(ctx: BenchContext): Promise<FigureResult> {
  const started = performance.now();
  const rows = new RowCollector('2');
  const peers = new PeerCollector('2');
  const notes: string[] = [];
  const { config } = ctx;
  const sizes = [...config.recipients].sort((a, b) => a - b);
  const recipients = Array.from({ length: sizes.at(-1) ?? 0 }, () => randomUUID());
  const trackers: Fleets = {
    herald: new DeliveryTracker(),
    raw: new DeliveryTracker(),
    sio: new DeliveryTracker(),
    centrifugo: ctx.centrifugo.map(() => new DeliveryTracker()),
  };
  const fleetOpts = {
    tls: ctx.tls,
    addresses: ctx.addresses,
    concurrency: config.connectConcurrency,
    handshakeTimeoutMs: HANDSHAKE_TIMEOUT_MS,
  };
  const fleets: Array<readonly [string, WsFleet | SioFleet]> = [
    [
      'Herald',
      new WsFleet({
        ...fleetOpts,
        url: (i) => connectUrl(ctx.stack, recipients[i] as string),
        onMessage: (_i, data) => trackers.herald.hit(seqOfFrame(data)),
      }),
    ],
    [
      'raw ws',
      new WsFleet({
        ...fleetOpts,
        url: (i) => rawWsUrl(ctx.baselines.rawWsOrigin, recipients[i] as string),
        onMessage: (_i, data) => trackers.raw.hit(seqOfFrame(data)),
      }),
    ],
    [
      'Socket.IO',
      new SioFleet({
        ...fleetOpts,
        origin: ctx.baselines.socketIoOrigin,
        recipient: (i) => recipients[i] as string,
        onEvent: (_i, payload) => trackers.sio.hit(seqOfValue(payload)),
      }),
    ],
    ...ctx.centrifugo.map(
      (peer, k) =>
        [
          peer.server.name,
          centrifugoFleet({
            ...fleetOpts,
            server: peer.server,
            recipient: (i) => recipients[i] as string,
            recover: false,
            onPublication: (_i, data) => trackers.centrifugo[k]?.hit(seqOfValue(data)),
          }),
        ] as const,
    ),
  ];
  let nextSeq = 0;
  try {
    for (const n of sizes) {
      ctx.log(`figure 2: connecting ${n} sockets to ${fleets.map(([name]) => name).join(', ')}`);
      for (const [name, fleet] of fleets) {
        const out = await fleet.grow(n - fleet.size);
        if (out.failed > 0) {
          throw new Error(`${name}: ${out.failed} of ${n} connects failed: ${out.firstError}`);
        }
      }
      const targets = targetsFor(ctx, recipients.slice(0, n), trackers);
      // Issue 31's lines are read at the first size (1,000 recipients by default).
      const forPeers = n === sizes[0];
      const row = peerRows(config);
      // Warm-up: JIT, key caches and keep-alive connections, for every target alike.
      for (const t of targets) {
        if (config.warmupMs <= 0) continue;
        const m = await measureWindow(t, config.warmupMs, nextSeq);
        nextSeq += m.used;
      }
      for (let run = 0; run < config.runs; run++) {
        ctx.checkDeadline();
        const line: string[] = [];
        for (const t of targets) {
          await t.http?.warm();
          const resume = await t.pause?.();
          const {
            result: m,
            cpuSeconds,
            perProcess,
          } = await meterCpu(ctx.servers, t.processes, () =>
            measureWindow(t, config.measureMs, nextSeq),
          ).finally(() => resume?.());
          nextSeq += m.used;
          const cpuUs = (1e6 * cpuSeconds) / m.delivered;
          const dupPct = (100 * m.duplicates) / Math.max(1, m.delivered);
          rows.add(metricOf(n), t.subject, t.role, 'deliveries/s', m.rate);
          rows.add(cpuMetricOf(n), t.subject, t.role, 'µs', cpuUs);
          if (!t.countAll) rows.add(dupMetricOf(n), t.subject, t.role, '%', dupPct);
          if (t.job === 'batch' || t.job === 'overload')
            rows.add(storedMetricOf(n), t.subject, t.role, 'events', m.stored);
          if (forPeers && t.system && t.job !== 'other') {
            const split = t.system === 'herald' ? perUnitUs(perProcess, m.delivered) : undefined;
            const [rate, cpu] =
              t.job === 'single'
                ? [row.online, row.onlineCpu]
                : t.job === 'batch'
                  ? [row.batch, row.batchCpu]
                  : [row.overload, row.overloadCpu];
            peers.add(declare(peers, rate), t.system, m.rate);
            peers.add(declare(peers, cpu), t.system, cpuUs, split);
            if (t.job === 'overload') {
              peers.add(declare(peers, row.duplicates), t.system, dupPct);
              peers.add(
                declare(
                  peers,
                  row.answered202,
                  'Centrifugo, Socket.IO and raw ws answer 200 for a live publish: they store nothing for a connected recipient, so only Herald and the floor can answer 202',
                ),
                t.system,
                m.stored,
              );
            }
          }
          line.push(`${t.subject.replace('baseline: ', '')} ${formatNumber(m.rate)}`);
          if (m.lost > 0 || m.failed > 0 || m.duplicates > 0 || m.late > 0) {
            notes.push(
              `${t.subject}, ${n} recipients, run ${run + 1}: ${m.failed} failed requests, ${m.lost} deliveries missing after ${SETTLE_TIMEOUT_MS / 1000} s, ${m.duplicates} delivered twice, ${m.stored} answered 202, ${m.late} frames of earlier windows${m.firstError ? ` (${m.firstError})` : ''}`,
            );
          }
        }
        ctx.log(`figure 2: ${n} recipients, run ${run + 1}/${config.runs}: ${line.join(', ')}`);
      }
    }
    const closes = fleets.map(([name, f]) => {
      const reasons = 'closeReasons' in f ? [...f.closeReasons] : [];
      const why = reasons.map(([reason, count]) => `${count} × ${reason}`).join(', ');
      return `${name} ${f.unexpectedCloses}${why ? ` (${why})` : ''}`;
    });
    if (fleets.some(([, f]) => f.unexpectedCloses > 0)) {
      notes.push(`Sockets closed by the server during the runs: ${closes.join(', ')}.`);
    }
  } finally {
    await Promise.all(fleets.map(([, f]) => f.close()));
  }
  return {
    id: '2',
    title: 'Online dispatch throughput',
    rows: rows.rows(),
    checks: sizes.flatMap((n) => checksFor(rows, n, config.batchSize, config.concurrency)),
    ratios: sizes.flatMap((n) =>
      Object.values(ratiosFor(rows, n, config.batchSize, config.concurrency)),
    ),
    peers: peers.lines(),
    notes,
    elapsedMs: performance.now() - started,
  };
}

/** The targets of issue 11 at n recipients, on same-run ratios against Socket.IO. */
function checksFor(rows: RowCollector, n: number, batch: number, concurrency: number): Check[] {
  const r = ratiosFor(rows, n, batch, concurrency);
  return [
    ratioCheckAtLeast('2', `${n} recipients, POST /notify: Herald ≥ 1.0× Socket.IO`, r.http, 1.0),
    ratioCheckAtLeast('2', `${n} recipients, rt.dispatch: Herald ≥ 1.5× Socket.IO`, r.nats, 1.5),
    ratioCheckAtLeast(
      '2',
      `${n} recipients, batch of ${batch}: Herald ≥ 5× Socket.IO per delivery`,
      r.batch,
      5,
    ),
  ];
}

function ratiosFor(rows: RowCollector, n: number, batch: number, concurrency: number) {
  const metric = metricOf(n);
  const vs = (label: string, herald: string, baseline: string) =>
    rows.ratio(`${n} recipients: ${label}`, metric, herald, baseline);
  return {
    http: vs('POST /notify ÷ Socket.IO', SUBJECTS.heraldHttp, SUBJECTS.socketIo),
    nats: vs('rt.dispatch ÷ Socket.IO', SUBJECTS.heraldNats, SUBJECTS.socketIo),
    batch: vs(
      `batch of ${batch}, ${concurrency} in flight ÷ Socket.IO POST /push`,
      inFlight(SUBJECTS.heraldBatch, concurrency),
      SUBJECTS.socketIo,
    ),
    httpRaw: vs('POST /notify ÷ raw ws POST /push', SUBJECTS.heraldHttp, SUBJECTS.rawHttp),
    pushLoop: vs('rt.dispatch ÷ raw ws push loop', SUBJECTS.heraldNats, SUBJECTS.rawPush),
    httpFloor: vs('POST /notify ÷ design floor POST', SUBJECTS.heraldHttp, SUBJECTS.floorHttp),
    natsFloor: vs('rt.dispatch ÷ design floor NATS', SUBJECTS.heraldNats, SUBJECTS.floorNats),
    floorHttpSio: vs('design floor POST ÷ Socket.IO', SUBJECTS.floorHttp, SUBJECTS.socketIo),
    floorNatsSio: vs('design floor NATS ÷ Socket.IO', SUBJECTS.floorNats, SUBJECTS.socketIo),
  };
}
