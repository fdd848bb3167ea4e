import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { memoryAfterGc, type ProcessMemory } from '../env/inspector.js';
import { type KernelSocketMemory, kernelSocketMemory } from '../env/kernel-socket-memory.js';
import { rssBytes } from '../env/process-cpu.js';
import type { Poster } from '../load/http-poster.js';
import { waitUntil } from '../load/pace.js';
import type { SioFleet } from '../load/sio-fleet.js';
import { WsFleet } from '../load/ws-fleet.js';
import type { System } from '../report/peers.js';
import type { Role } from '../report/results.js';
import { percentile } from '../stats.js';
import { type BenchContext, HANDSHAKE_TIMEOUT_MS } from './context.js';
import { meterCpu, perUnitUs } from './cpu-meter.js';
import { DeliveryCounter } from './delivery-counter.js';

/** A probe that gets no frame within this long counts as this slow. */
const PROBE_TIMEOUT_MS = 5000;

/** A server a ramp adds idle connections to. */
export interface RampSubject {
  name: string;
  role: Role;
  /** Its V8 inspector (Node servers): memory is read after forced GCs through it. */
  inspectPort: number | undefined;
  /** The process holding the sockets, read from /proc when it has no inspector (Centrifugo). */
  pid?: number;
  /**
   * Processes of the same system outside Node whose memory also grows with connections
   * (nats-server's interest per recipient, Redis's subscription per channel): their RSS growth
   * is added to the holder's.
   */
  alsoGrowing?: number[];
  /** The port its sockets are accepted on, to find them with `ss`. */
  port: number;
  /** The server processes that accept its connections, whose CPU is charged to each accept. */
  processes: readonly string[];
  /** Opens the fleet of idle sockets. */
  fleet(recipients: string[]): WsFleet | SioFleet;
  /** The system in issue 31's table. */
  system?: System;
  /** Ramp only to figure 5's first memory level (a second client of a server already ramped). */
  firstLevelOnly?: boolean;
  /** The 1 msg/s probe: absent for Socket.IO, which figure 6 does not measure. */
  probe?: {
    url: (recipient: string) => string;
    http: Poster;
    path: string;
    body: (r: string, p: string) => string;
  };
}

/** The connection counts a ramp stops at: every memory level and every step up to the top. */
export function rampLevels(memoryLevels: readonly number[], step: number, top: number): number[] {
  const levels = new Set(memoryLevels.filter((l) => l <= top));
  if (step > 0) for (let l = step; l <= top; l += step) levels.add(l);
  levels.add(top);
  return [...levels].sort((a, b) => a - b);
}

export interface RampOutcome {
  healthy: number;
  acceptRate: number;
  /** Server CPU seconds per accepted connection while growing. */
  cpuPerAccept: number;
  /** The same split by process, µs per accepted connection. */
  cpuSplitUs: Record<string, number>;
  lastP99: number;
  stoppedBy: string;
  memory: Map<number, { rss: number; heap: number; kernel: number }>;
}

/**
 * Adds idle connections to one server up to each level in turn: at each level the probe runs (if
 * figure 6 wants it) until its p99 passes the bound, and at figure 5's levels the server's memory
 * is read after a forced GC. Stops when an accept fails; after the probe's bound only figure 5's
 * levels remain.
 */
export async function ramp(
  ctx: BenchContext,
  subject: RampSubject,
  levels: number[],
  memoryLevels: number[],
  probeWanted: boolean,
): Promise<RampOutcome> {
  const { config } = ctx;
  const top = levels.at(-1) ?? 0;
  const recipients = Array.from({ length: top }, () => randomUUID());
  // Sockets closed by the previous ramp must be gone from the server before its baseline reading.
  await new Promise((r) => setTimeout(r, 1000));
  const base = await readMemory(subject);
  const memory = new Map<number, { rss: number; heap: number; kernel: number }>();
  const probeCounter = new DeliveryCounter();
  const probeRecipient = randomUUID();
  const probeFleet =
    probeWanted && subject.probe
      ? new WsFleet({
          url: () => subject.probe?.url(probeRecipient) ?? '',
          tls: ctx.tls,
          addresses: ctx.addresses,
          concurrency: 1,
          handshakeTimeoutMs: HANDSHAKE_TIMEOUT_MS,
          onMessage: probeCounter.hit,
        })
      : undefined;
  const fleet = subject.fleet(recipients);
  let healthy = 0;
  let acceptMs = 0;
  let acceptCpu = 0;
  const acceptSplit: Record<string, number> = {};
  let opened = 0;
  let lastP99 = Number.NaN;
  let stoppedBy = `reached the ramp's top of ${top.toLocaleString('en-US')} connections with the probe healthy`;
  try {
    if (probeFleet) {
      const p = await probeFleet.grow(1);
      if (p.failed > 0)
        throw new Error(`${subject.name}: the probe socket failed to connect: ${p.firstError}`);
    }
    // Past the probe's bound figure 6 has its count, but the ramp goes on to figure 5's levels.
    let probing = probeFleet !== undefined;
    const lastMemoryLevel = memoryLevels.at(-1) ?? 0;
    for (const level of levels) {
      if (!probing && level > lastMemoryLevel) break;
      ctx.checkDeadline();
      const {
        result: out,
        cpuSeconds,
        perProcess,
      } = await meterCpu(ctx.servers, subject.processes, () => fleet.grow(level - fleet.size));
      acceptCpu += cpuSeconds;
      for (const [name, v] of Object.entries(perProcess))
        acceptSplit[name] = (acceptSplit[name] ?? 0) + v;
      acceptMs += out.elapsedMs;
      opened += out.opened;
      if (out.failed > 0) {
        if (probing) {
          stoppedBy = `accepts failed between ${healthy.toLocaleString('en-US')} and ${level.toLocaleString('en-US')} connections (${out.failed} failed: ${out.firstError})`;
        }
        break;
      }
      if (probing && subject.probe) {
        const p99 = await probes(ctx, subject.probe, probeRecipient, probeCounter);
        if (p99 > config.probeP99Ms) {
          stoppedBy = `the probe's p99 reached ${Math.round(p99)} ms at ${level.toLocaleString('en-US')} connections`;
          probing = false;
        } else {
          lastP99 = p99;
          healthy = level;
        }
      } else if (!probeFleet) {
        healthy = level;
      }
      if (memoryLevels.includes(level)) {
        const now = await readMemory(subject);
        const k = now.kernel;
        memory.set(level, {
          rss: now.process.rss - base.process.rss,
          heap: now.process.heapUsed - base.process.heapUsed,
          // Per connection once divided by level: buffers of every accepted socket plus the objects.
          kernel: k.bufferBytes - base.kernel.bufferBytes + k.objectBytesPerSocket * level,
        });
      }
    }
  } finally {
    await Promise.all([fleet.close(), probeFleet?.close()]);
  }
  return {
    healthy,
    acceptRate: opened / (acceptMs / 1000),
    cpuPerAccept: acceptCpu / opened,
    cpuSplitUs: perUnitUs(acceptSplit, opened),
    lastP99,
    stoppedBy,
    memory,
  };
}

async function readMemory(
  subject: RampSubject,
): Promise<{ process: ProcessMemory; kernel: KernelSocketMemory }> {
  const process = await holderMemory(subject);
  const others = await Promise.all((subject.alsoGrowing ?? []).map(rssBytes));
  process.rss += others.filter(Number.isFinite).reduce((a, b) => a + b, 0);
  return { process, kernel: await kernelSocketMemory(subject.port) };
}

/** The socket holder's memory: after forced GCs for a Node server, its RSS for any other. */
async function holderMemory(subject: RampSubject): Promise<ProcessMemory> {
  if (subject.inspectPort !== undefined) return memoryAfterGc(subject.inspectPort);
  if (subject.pid === undefined)
    throw new Error(`${subject.name} has neither an inspector port nor a pid to read`);
  const rss = await rssBytes(subject.pid);
  return {
    rss,
    heapUsed: Number.NaN,
    heapTotal: Number.NaN,
    external: Number.NaN,
    arrayBuffers: Number.NaN,
  };
}

/** Sends `probesPerStep` events to the probe socket, one per second; returns their p99 latency. */
async function probes(
  ctx: BenchContext,
  probe: NonNullable<RampSubject['probe']>,
  recipient: string,
  counter: DeliveryCounter,
): Promise<number> {
  const latencies: number[] = [];
  for (let k = 0; k < ctx.config.probesPerStep; k++) {
    const before = counter.received;
    const t0 = performance.now();
    const sent = probe.http
      .post(probe.path, probe.body(recipient, ctx.payload.make(k)))
      .catch(() => undefined);
    const arrived = await waitUntil(() => counter.received > before, PROBE_TIMEOUT_MS, 1);
    latencies.push(arrived ? counter.lastAt - t0 : PROBE_TIMEOUT_MS);
    await sent;
    const wait = 1000 - (performance.now() - t0);
    if (k < ctx.config.probesPerStep - 1 && wait > 0) await new Promise((r) => setTimeout(r, wait));
  }
  return percentile(latencies, 99);
}
