/** One reading of one process, every sample period. */
export interface Sample {
  /** Seconds since the load started. */
  t: number;
  /** `auth`, `socket-edge`, …, `nats-server`, `postgres`. */
  process: string;
  /**
   * Which life of the process this is (its pid, or a Node service's start time): a restart
   * starts a new one, and the slope fit never joins two lives with one line.
   */
  life: string;
  rssBytes: number;
  /** Node's used heap (services only). */
  heapUsedBytes?: number;
  /** Node's used heap right after its last full GC: the live data (services only). */
  heapAfterGcBytes?: number;
  openFds?: number;
  /** nats-server only: consumers of every stream (`/jsz`). */
  consumers?: number;
}

/** A fault injected at a fixed point of the run, marked on the plot. */
export interface Restart {
  t: number;
  process: string;
}

const COLUMNS = [
  't_s',
  'process',
  'life',
  'rss_bytes',
  'heap_used_bytes',
  'open_fds',
  'consumers',
  'heap_after_gc_bytes',
];

/** The samples as CSV, one row per process per sample, empty cells where a process has no value. */
export function samplesCsv(samples: readonly Sample[]): string {
  const cell = (v: string | number | undefined) => {
    if (v === undefined) return '';
    const s = String(v);
    return /[",\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
  };
  const rows = samples.map((s) =>
    [
      s.t.toFixed(1),
      s.process,
      s.life,
      s.rssBytes,
      s.heapUsedBytes,
      s.openFds,
      s.consumers,
      s.heapAfterGcBytes,
    ]
      .map(cell)
      .join(','),
  );
  return `${[COLUMNS.join(','), ...rows].join('\n')}\n`;
}

/** The processes in the order they first appear. */
export function processesOf(samples: readonly Sample[]): string[] {
  return [...new Set(samples.map((s) => s.process))];
}
