import { CLIENTS, type PeerTarget } from './peer-line.js';

export interface PeerRow {
  order: number;
  label: string;
  unit: string;
  target?: PeerTarget;
  /** Which client Herald's side uses (CLIENTS). */
  client?: string;
}

const atLeast = (k: number): PeerTarget => ({
  kind: 'ratio',
  op: '>=',
  k,
  text: `≥ ${k.toFixed(1)}×`,
});
const atMost = (k: number): PeerTarget => ({
  kind: 'ratio',
  op: '<=',
  k,
  text: `≤ ${k.toFixed(1)}×`,
});

/**
 * Issue 31's table, row by row, with its targets, and issue 42's rows with the SDK's default
 * client beside the device-less ones: each figure fills the rows it measures. The sizes in the
 * labels are the run's own (BENCH_CONCURRENCY, BENCH_BATCH_SIZE, ...).
 */
export function peerRows(c: {
  concurrency: number;
  batchSize: number;
  batchConcurrency: number;
  latencyRate: number;
  drainOne: number;
  drainMany: number;
  drainEach: number;
}) {
  const n = (v: number) => v.toLocaleString('en-US');
  const batch = (inFlight: number) => `batch of ${c.batchSize}, ${inFlight} in flight`;
  const overload = batch(c.concurrency);
  const plain = { client: CLIENTS.plain };
  const drainRate = (order: number, which: string, client: string) => ({
    order,
    label: `drain those ${n(c.drainOne)} on connect, ${which}: events/s`,
    unit: 'events/s',
    // Issue 42's target for the SDK's default client, the same as issue 31's.
    target: atLeast(0.5),
    client,
  });
  const storm = `${n(c.drainMany)} recipients × ${n(c.drainEach)} queued, all reconnect`;
  return {
    online: {
      order: 1,
      label: `online publish, ${c.concurrency} in flight: events/s`,
      unit: 'events/s',
      target: atLeast(1),
      ...plain,
    },
    onlineCpu: {
      order: 2,
      label: 'online publish: server CPU per event',
      unit: 'µs',
      target: atMost(1),
      ...plain,
    },
    batch: {
      order: 3,
      label: `${batch(c.batchConcurrency)}: events/s`,
      unit: 'events/s',
      target: atLeast(1.5),
      ...plain,
    },
    batchCpu: {
      order: 4,
      label: `${batch(c.batchConcurrency)}: server CPU per event`,
      unit: 'µs',
      ...plain,
    },
    overload: {
      order: 5,
      label: `${overload}: events/s`,
      unit: 'events/s',
      target: atLeast(1.5),
      ...plain,
    },
    overloadCpu: { order: 6, label: `${overload}: server CPU per event`, unit: 'µs', ...plain },
    duplicates: {
      order: 7,
      label: `${overload}: events delivered twice`,
      unit: '%',
      target: { kind: 'value', op: '<=', k: 1, text: '≤ 1% of events delivered twice' },
      ...plain,
    },
    answered202: {
      order: 8,
      label: `${overload}: events to connected, reading recipients answered 202`,
      unit: 'events',
      target: { kind: 'value', op: '<=', k: 0, text: 'none answered 202' },
      ...plain,
    },
    latencyP50: {
      order: 9,
      label: `latency at ${n(c.latencyRate)} events/s: p50`,
      unit: 'ms',
      ...plain,
    },
    latencyP99: {
      order: 10,
      label: `latency at ${n(c.latencyRate)} events/s: p99`,
      unit: 'ms',
      target: { kind: 'value', op: '<=', k: 2, text: 'p99 ≤ 2 ms' },
      ...plain,
    },
    latencyCpu: {
      order: 11,
      label: `latency at ${n(c.latencyRate)} events/s: server CPU per event`,
      unit: 'µs',
      ...plain,
    },
    store: {
      order: 12,
      label: `store ${n(c.drainOne)} for one offline recipient: events/s`,
      unit: 'events/s',
      target: atLeast(1),
      client: CLIENTS.http,
    },
    storeCpu: {
      order: 13,
      label: `store ${n(c.drainOne)}: server CPU per event`,
      unit: 'µs',
      client: CLIENTS.http,
    },
    drain: {
      order: 14,
      label: `drain those ${n(c.drainOne)} on connect: events/s`,
      unit: 'events/s',
      target: atLeast(0.5),
      client: CLIENTS.noDevice,
    },
    drainFirst: drainRate(14.1, 'first device', CLIENTS.sdk),
    drainSecond: drainRate(14.2, 'second device after the first', CLIENTS.sdk),
    drainInboxFirst: drainRate(14.3, "an inbox key's first device", CLIENTS.sdkInbox),
    drainInboxSecond: drainRate(14.4, 'its second device after the first', CLIENTS.sdkInbox),
    drainCpu: {
      order: 15,
      label: `drain ${n(c.drainOne)}: server CPU per event`,
      unit: 'µs',
      client: CLIENTS.noDevice,
    },
    drainFirstCpu: {
      order: 15.1,
      label: `drain ${n(c.drainOne)}, first device: server CPU per event`,
      unit: 'µs',
      client: CLIENTS.sdk,
    },
    storm: {
      order: 16,
      label: `${storm}: p99 to last event`,
      unit: 'ms',
      target: atMost(1),
      client: CLIENTS.noDevice,
    },
    stormDevice: {
      order: 16.1,
      label: `${storm}, each with a device: p99 to last event`,
      unit: 'ms',
      target: atMost(1),
      client: CLIENTS.sdk,
    },
    stormCpu: {
      order: 17,
      label: `${n(c.drainMany)} × ${n(c.drainEach)} reconnect: server CPU per event`,
      unit: 'µs',
      client: CLIENTS.noDevice,
    },
    stormDeviceCpu: {
      order: 17.1,
      label: `${n(c.drainMany)} × ${n(c.drainEach)} reconnect, each with a device: server CPU per event`,
      unit: 'µs',
      client: CLIENTS.sdk,
    },
    memory: {
      order: 18,
      label: 'idle connections: memory (RSS) per connection',
      unit: 'KB',
      target: atMost(0.6),
      ...plain,
    },
    connect: {
      order: 19,
      label: 'connect: server CPU per connection',
      unit: 'µs',
      target: atMost(1),
      ...plain,
    },
    connectDevice: {
      order: 19.1,
      label: 'connect with a device: server CPU per connection',
      unit: 'µs',
      // Issue 42's target for the SDK's default client.
      target: atMost(2),
      client: CLIENTS.sdk,
    },
  } satisfies Record<string, PeerRow>;
}
