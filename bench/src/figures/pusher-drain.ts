import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import type { PusherApp } from '../env/herald-stack.js';
import { WsFleet } from '../load/ws-fleet.js';
import type { RowCollector } from '../report/results.js';
import { type BenchContext, HANDSHAKE_TIMEOUT_MS } from './context.js';
import { meterCpu, PROCESSES, perUnitUs } from './cpu-meter.js';
import { metered } from './drain-store.js';
import { reconnect, storm, stormSettings } from './drain-storm.js';
import { connectUrl } from './herald-wire.js';
import { SPLIT, SUBJECTS } from './pusher-publish.js';
import { pusherFrames, pusherHandshake, pusherUrl, userEnvelope } from './pusher-wire.js';
import { queueEvents, resetQueue } from './queue-prep.js';

/** The drain and connect metrics, named with the run's sizes. */
export const drainConnectMetrics = (drainOne: number, connects: number) => {
  const queued = `1 user × ${drainOne.toLocaleString('en-US')} queued`;
  const at = `${connects.toLocaleString('en-US')} sockets`;
  return {
    drainRate: `drain events/s, ${queued}`,
    drainCpu: `server CPU per drained event, ${queued} (all of Herald)`,
    drainSplit: (p: string) => `${p} CPU per drained event, ${queued}`,
    connectRate: `connections/s (upgrade to ready), ${at}`,
    connectCpu: `server CPU per connection, ${at} (all of Herald)`,
    connectSplit: (p: string) => `${p} CPU per connection, ${at}`,
  };
};

/** A side's order in run `run`: Herald's first in even runs, Pusher's in odd ones. */
const ordered = <T>(herald: T, pusher: T, run: number): T[] =>
  run % 2 === 0 ? [herald, pusher] : [pusher, herald];

/**
 * Figure 9's drain, one run: BENCH_DRAIN_ONE events queued for one absent user, drained on a
 * `/ws/connect` socket (figure 4a's client: herald.v1 `batch=1`, every `events` frame answered with
 * one list ack) and on an `/app/{key}` socket signing in as that user (each frame's events proved
 * by answering the edge's `pusher:ping`), in alternating order. The events are stored as ingress
 * stores them (queue-prep.ts): the bench payload for `/notify`, the PusherEnvelope `sendToUser`
 * stores for the Pusher user. Each side starts from an empty queue.
 */
export async function drainRun(
  ctx: BenchContext,
  app: PusherApp,
  rows: RowCollector,
  notes: string[],
  run: number,
  seq: { next: number },
): Promise<string> {
  const n = ctx.config.drainOne;
  const m = drainConnectMetrics(n, ctx.config.recipients[0] ?? 1);
  type Drained = [string, Awaited<ReturnType<typeof metered>>];
  const herald = async (): Promise<Drained> => {
    const r = randomUUID();
    await queueEvents(ctx, [r], n, seq.next);
    seq.next += n;
    return [
      SUBJECTS.drainHerald,
      await metered(ctx, PROCESSES.herald, () => reconnect(ctx, [r], n)),
    ];
  };
  const pusher = async (): Promise<Drained> => {
    const user = randomUUID();
    const envelopes = {
      ...ctx,
      payload: {
        bytes: ctx.payload.bytes,
        make: (s: number) => userEnvelope(user, ctx.payload.make(s)),
      },
    };
    await queueEvents(envelopes, [user], n, seq.next);
    seq.next += n;
    const drained = await metered(ctx, PROCESSES.herald, () =>
      storm(
        ctx,
        [user],
        n,
        (on) =>
          new WsFleet({
            url: () => pusherUrl(ctx.stack, app),
            ...stormSettings(ctx, 1),
            handshake: pusherHandshake(app, () => user),
            onOpen: on.onOpen,
            onMessage: pusherFrames((i, s) => on.onEvent(i, String(s), s)),
          }),
      ),
    );
    return [SUBJECTS.drainPusher, drained];
  };
  const line: string[] = [];
  for (const side of ordered(herald, pusher, run)) {
    await resetQueue(ctx);
    const [subject, d] = await side();
    const rate = d.delivered / ((d.times[0] ?? Number.NaN) / 1000);
    rows.add(m.drainRate, subject, 'herald', 'events/s', rate);
    rows.add(m.drainCpu, subject, 'herald', 'µs', d.cpuPerEventUs);
    for (const p of SPLIT) rows.add(m.drainSplit(p), subject, 'herald', 'µs', d.split[p] ?? 0);
    if (d.delivered < n || d.failedConnects > 0)
      notes.push(
        `drain, ${subject}, run ${run + 1}: ${d.delivered} of ${n} delivered within ${ctx.config.drainTimeoutMs / 1000} s${d.firstError ? ` (${d.firstError})` : ''}`,
      );
    line.push(
      `${subject === SUBJECTS.drainHerald ? '/ws/connect' : 'Pusher'} ${Math.round(rate)}/s`,
    );
  }
  await resetQueue(ctx);
  return `drain ${line.join(', ')}`;
}

/** How long the edge gets, after a side's sockets close, to let go of them before the next side. */
const AFTER_CLOSE_MS = 1000;

/**
 * Figure 9's connect, one run: BENCH_RECIPIENTS' first size of fresh recipients connect, at
 * BENCH_CONNECT_CONCURRENCY handshakes in flight, to `/ws/connect` (ready at the upgrade: the
 * key is verified before it) and to `/app/{key}` (ready at `pusher:signin_success`: the upgrade,
 * `pusher:connection_established`, the sign-in and its signature, the session joined), in
 * alternating order; connections/s and all of Herald's CPU per connection over the growth.
 */
export async function connectRun(
  ctx: BenchContext,
  app: PusherApp,
  rows: RowCollector,
  notes: string[],
  run: number,
): Promise<string> {
  const count = ctx.config.recipients[0] ?? 1;
  const m = drainConnectMetrics(ctx.config.drainOne, count);
  const settings = {
    tls: ctx.tls,
    addresses: ctx.addresses,
    concurrency: ctx.config.connectConcurrency,
    handshakeTimeoutMs: HANDSHAKE_TIMEOUT_MS,
  };
  const herald = (): [string, WsFleet] => {
    const rs = Array.from({ length: count }, () => randomUUID());
    return [
      SUBJECTS.connectHerald,
      new WsFleet({ ...settings, url: (i) => connectUrl(ctx.stack, rs[i] as string) }),
    ];
  };
  const pusher = (): [string, WsFleet] => {
    const users = Array.from({ length: count }, () => randomUUID());
    return [
      SUBJECTS.connectPusher,
      new WsFleet({
        ...settings,
        url: () => pusherUrl(ctx.stack, app),
        handshake: pusherHandshake(app, (i) => users[i] as string),
        onMessage: pusherFrames(() => {}),
      }),
    ];
  };
  const line: string[] = [];
  for (const side of ordered(herald, pusher, run)) {
    const [subject, fleet] = side();
    try {
      const started = performance.now();
      const { result, cpuSeconds, perProcess } = await meterCpu(ctx.servers, PROCESSES.herald, () =>
        fleet.grow(count),
      );
      const opened = Math.max(1, result.opened);
      rows.add(m.connectRate, subject, 'herald', 'connections/s', result.acceptRate);
      rows.add(m.connectCpu, subject, 'herald', 'µs', (1e6 * cpuSeconds) / opened);
      const split = perUnitUs(perProcess, opened);
      for (const p of [...SPLIT, 'auth'])
        rows.add(m.connectSplit(p), subject, 'herald', 'µs', split[p] ?? 0);
      if (result.failed > 0)
        notes.push(
          `connect, ${subject}, run ${run + 1}: ${result.failed} of ${count} failed (${result.firstError})`,
        );
      line.push(
        `${subject === SUBJECTS.connectHerald ? '/ws/connect' : 'Pusher'} ${Math.round(result.acceptRate)}/s in ${Math.round(performance.now() - started)} ms`,
      );
    } finally {
      await fleet.close();
    }
    await new Promise((r) => setTimeout(r, AFTER_CLOSE_MS));
  }
  return `connect ${line.join(', ')}`;
}
