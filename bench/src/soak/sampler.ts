import { readdirSync, readFileSync } from 'node:fs';
import type { Sample } from './samples.js';

type Reading = Omit<Sample, 't' | 'process'>;

/** A process the sampler reads every period; `read` resolves undefined while it is down. */
export interface Probe {
  process: string;
  read(): Promise<Reading | undefined>;
}

const TIMEOUT_MS = 5000;

async function text(url: string): Promise<string | undefined> {
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(TIMEOUT_MS) });
    return res.ok ? await res.text() : undefined;
  } catch {
    return undefined;
  }
}

/** The first value of a Prometheus metric in exposition text (labels ignored). */
export function metricValue(exposition: string, name: string): number | undefined {
  const m = new RegExp(`^${name}(?:\\{[^}]*\\})? (\\S+)`, 'm').exec(exposition);
  return m?.[1] === undefined ? undefined : Number(m[1]);
}

/**
 * A Herald service through its ops listener's `/metrics` (prom-client's process metrics): RSS,
 * used heap, used heap after the last full GC (lib/kit's) and open descriptors; its life is its
 * start time, which a restart changes.
 */
export function serviceProbe(process: string, opsPort: () => number | undefined): Probe {
  return {
    process,
    async read() {
      const port = opsPort();
      const body = port === undefined ? undefined : await text(`http://127.0.0.1:${port}/metrics`);
      if (body === undefined) return undefined;
      const rss = metricValue(body, 'process_resident_memory_bytes');
      if (rss === undefined) return undefined;
      const heap = metricValue(body, 'nodejs_heap_size_used_bytes');
      const afterGc = metricValue(body, 'nodejs_heap_used_after_gc_bytes');
      const fds = metricValue(body, 'process_open_fds');
      return {
        life: String(metricValue(body, 'process_start_time_seconds') ?? 'unknown'),
        rssBytes: rss,
        ...(heap === undefined ? {} : { heapUsedBytes: heap }),
        ...(afterGc === undefined ? {} : { heapAfterGcBytes: afterGc }),
        ...(fds === undefined ? {} : { openFds: fds }),
      };
    },
  };
}

/** Open descriptors of a pid (`/proc/<pid>/fd`), undefined when it is gone. */
export function openFds(pid: number): number | undefined {
  try {
    return readdirSync(`/proc/${pid}/fd`).length;
  } catch {
    return undefined;
  }
}

/**
 * nats-server through its monitoring port: `/varz`'s `mem` (its RSS) and `/jsz`'s consumer
 * count; its descriptors from /proc; its life is its pid (a host pid: a container's is looked up).
 */
export function natsProbe(
  monitorUrl: string,
  pid: () => number | undefined | Promise<number | undefined>,
): Probe {
  return {
    process: 'nats-server',
    async read() {
      const [varz, jsz] = await Promise.all([
        text(`${monitorUrl}/varz`),
        text(`${monitorUrl}/jsz`),
      ]);
      if (varz === undefined) return undefined;
      const p = await pid();
      const fds = p === undefined ? undefined : openFds(p);
      const consumers =
        jsz === undefined ? undefined : (JSON.parse(jsz) as { consumers?: number }).consumers;
      return {
        life: String(p ?? 'unknown'),
        rssBytes: (JSON.parse(varz) as { mem: number }).mem,
        ...(fds === undefined ? {} : { openFds: fds }),
        ...(consumers === undefined ? {} : { consumers }),
      };
    },
  };
}

/** A process and all its descendants (Postgres forks a backend per connection). */
function tree(pid: number): number[] {
  const out = [pid];
  for (let i = 0; i < out.length; i++) {
    try {
      const kids = readFileSync(`/proc/${out[i]}/task/${out[i]}/children`, 'utf8');
      out.push(...kids.split(/\s+/).filter(Boolean).map(Number));
    } catch {
      // Gone meanwhile.
    }
  }
  return out;
}

/** `Pss:` of /proc/<pid>/smaps_rollup in bytes: its share of shared memory, never counted twice. */
function pssBytes(pid: number): number {
  try {
    const m = /^Pss:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8'));
    return m?.[1] ? Number(m[1]) * 1024 : 0;
  } catch {
    return 0;
  }
}

/**
 * Postgres as a process tree: the postmaster and its backends, their proportional set sizes
 * summed (shared buffers counted once, not once per backend), their descriptors summed.
 */
export function postgresProbe(pid: number): Probe {
  return {
    process: 'postgres',
    async read() {
      const pids = tree(pid);
      if (openFds(pid) === undefined) return undefined;
      return {
        life: String(pid),
        rssBytes: pids.reduce((a, p) => a + pssBytes(p), 0),
        openFds: pids.reduce((a, p) => a + (openFds(p) ?? 0), 0),
      };
    },
  };
}

/** Reads every probe every `periodMs` into `samples`, `t` in seconds since `startMs`. */
export function startSampler(probes: readonly Probe[], periodMs: number, startMs: number) {
  const samples: Sample[] = [];
  const round = async () => {
    const t = (Date.now() - startMs) / 1000;
    // A probe that throws (a half-written answer mid-restart) misses this sample, never the next.
    const read = await Promise.all(probes.map((p) => p.read().catch(() => undefined)));
    read.forEach((r, i) => {
      if (r) samples.push({ t, process: probes[i]?.process ?? '?', ...r });
    });
  };
  let running = round();
  const timer = setInterval(() => {
    running = running.then(round);
  }, periodMs);
  return {
    samples,
    /** Takes one last sample, then stops. */
    async stop(): Promise<Sample[]> {
      clearInterval(timer);
      await running.then(round);
      return samples;
    },
  };
}
