import type { BenchConfig } from '../config.js';
import type { Tenant } from '../env/herald-stack.js';
import type { PeerCollector, peerRows, System } from '../report/peers.js';
import type { Role, RowCollector } from '../report/results.js';
import type { CentrifugoPeer } from './context.js';
import { centrifugoProcesses, centrifugoSystem } from './cpu-meter.js';

export const SUBJECTS = {
  herald: 'Herald socket-edge, no device (herald.v1, batch=1, list acks)',
  /** Issue 42: the SDK's default client, whose `device` has the edge feed it from a position. */
  heraldDevice: (which: string) =>
    `Herald socket-edge, SDK default client (herald.v1, batch=1, list acks, device): ${which}`,
  heraldInboxDevice: (which: string) =>
    `Herald socket-edge, SDK default client, inbox key (herald.v1, batch=1, list acks, device): ${which}`,
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

export const systemOf = (peer: CentrifugoPeer): System => centrifugoSystem(peer.engine);
export const processesOf = (peer: CentrifugoPeer) => centrifugoProcesses(peer.engine);

export const NO_STORE =
  'Socket.IO and the raw ws server keep nothing for an absent recipient, so they have no value here';

/** The metrics of figure 4's rows, named with the run's sizes. */
export function drainMetrics(config: BenchConfig) {
  const n = config.drainOne;
  const m = config.drainMany;
  const each = config.drainEach;
  return {
    oneMetric: `(a) events/s, 1 recipient × ${n.toLocaleString('en-US')} queued`,
    manyP50: `(b) p50 time to caught up, ${m.toLocaleString('en-US')} × ${each}`,
    manyP99: `(b) p99 time to caught up, ${m.toLocaleString('en-US')} × ${each}`,
    manyDelivered: `(b) delivered / expected, ${m.toLocaleString('en-US')} × ${each}`,
    manyDuplicates: `(b) events delivered twice, ${m.toLocaleString('en-US')} × ${each}`,
    manyOutOfOrder: `(b) events out of order, ${m.toLocaleString('en-US')} × ${each}`,
    oneDelivered: `(a) delivered / expected, 1 recipient × ${n.toLocaleString('en-US')}`,
    oneDuplicates: `(a) events delivered twice, 1 recipient × ${n.toLocaleString('en-US')}`,
    oneOutOfOrder: `(a) events out of order, 1 recipient × ${n.toLocaleString('en-US')}`,
    natsCpu: '(b) nats-server CPU per queued recipient, Herald drain',
    natsRss: '(b) nats-server RSS growth per queued recipient (events + consumer)',
    oneCpu: '(a) server CPU per delivered event',
    manyCpu: '(b) server CPU per delivered event',
    openP50: `(b) p50 time to socket open, ${m.toLocaleString('en-US')} × ${each}`,
    openP99: `(b) p99 time to socket open, ${m.toLocaleString('en-US')} × ${each}`,
    afterOpenP99: `(b) p99 time from socket open to caught up, ${m.toLocaleString('en-US')} × ${each}`,
    storeMetric: `(a) events/s stored, 1 recipient × ${n.toLocaleString('en-US')}`,
    storeCpu: '(a) server CPU per stored event',
  };
}

/** Where one run of figure 4 writes, and what it knows of the figure so far. */
export interface DrainRun {
  rows: RowCollector;
  peers: PeerCollector;
  /** The peer rows' names (issue 31's table). */
  row: ReturnType<typeof peerRows>;
  notes: string[];
  metric: ReturnType<typeof drainMetrics>;
  /** Run number, from 0. */
  run: number;
  /** The payload sequence numbers used so far: each part takes the next ones. */
  seq: { next: number };
  /** The inbox key's tenant (`--inbox-days`), for the inbox device rows. */
  inbox: Tenant;
}

/**
 * Every id counted (issue 42): the share of the expected events that arrived, the arrivals of an
 * event already received, and, when `ordered` (the events were stored in the order of their
 * sequence numbers: not so for stores of 64 requests in flight), the first arrivals that came
 * after a later-stored event.
 */
export function countRows(
  out: DrainRun,
  part: 'one' | 'many',
  subject: string,
  role: Role,
  r: { delivered: number; duplicates: number; outOfOrder: number },
  expected: number,
  ordered = true,
): void {
  const { rows, metric } = out;
  const [delivered, twice, order] =
    part === 'one'
      ? [metric.oneDelivered, metric.oneDuplicates, metric.oneOutOfOrder]
      : [metric.manyDelivered, metric.manyDuplicates, metric.manyOutOfOrder];
  rows.add(delivered, subject, role, '%', (100 * r.delivered) / expected);
  rows.add(twice, subject, role, 'events', r.duplicates);
  if (ordered) rows.add(order, subject, role, 'events', r.outOfOrder);
}
