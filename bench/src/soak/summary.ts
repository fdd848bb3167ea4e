import { heapSlope, judgeSlope, rssSlope, type SlopeFit, type SlopeVerdict } from './fit.js';
import type { LedgerCounts } from './ledger.js';
import { type PushTally, pushFailures } from './push-tally.js';
import { processesOf, type Restart, type Sample } from './samples.js';

const MB = 1024 * 1024;

export interface ProcessRow {
  process: string;
  startRssBytes: number;
  endRssBytes: number;
  /** Open descriptors in the first and the last sample that had them. */
  fds: { start?: number; end?: number };
  /** Lives the process had (1: never restarted). */
  lives: number;
  /** RSS after warm-up. */
  fit: SlopeFit;
  /** Used heap after a full GC after warm-up: Node services only. */
  heapFit?: SlopeFit;
  /**
   * What fails the run: the heap-after-GC slope's verdict for a Node service (with its RSS slope
   * only when that heap grows too), the RSS slope's for the others.
   */
  verdict: SlopeVerdict;
  /** A Node service's RSS slope above its limit while its heap after GC stayed within its own. */
  rssOnly: boolean;
}

/** A check of what must not outlive its owner: what was found at the end against what may be. */
export interface LeftoverCheck {
  what: string;
  found: number;
  allowed: number;
}

export interface SoakReport {
  startedAt: string;
  minutes: number;
  /** How long the end waited for every accepted event, ms. */
  drainMs: number;
  warmupMs: number;
  maxSlopeMbPerH: number;
  maxHeapSlopeMbPerH: number;
  slopeMinWindowMs: number;
  rows: ProcessRow[];
  ledger: LedgerCounts;
  misrouted: number;
  /** The push key's Web Push deliveries (absent in a run without a push key). */
  push?: PushTally;
  leftovers: LeftoverCheck[];
  restarts: Restart[];
  /** Other figures worth a line (socket churn, webhooks, inbox requests). */
  notes: string[];
}

/**
 * Each process's first and last RSS, its lives and its post-warm-up slopes with the verdict. A
 * Node service is judged by its heap after GC: RSS that V8 and the allocator keep after a burst
 * is not a leak, and read alone it failed a run whose live heap was flat (issue 43). Its RSS slope
 * fails the run only when that heap grows beyond its limit too, and is flagged otherwise.
 */
export function processRows(
  samples: readonly Sample[],
  opts: { warmupMs: number; maxMbPerHour: number; maxHeapMbPerHour: number; minWindowMs: number },
): ProcessRow[] {
  return processesOf(samples).map((process) => {
    const own = samples.filter((s) => s.process === process);
    const fit = rssSlope(samples, process, opts.warmupMs);
    const rssVerdict = judgeSlope(fit, opts);
    const heapFit = heapSlope(samples, process, opts.warmupMs);
    const node = heapFit.points > 0;
    const heapVerdict = node
      ? judgeSlope(heapFit, { ...opts, maxMbPerHour: opts.maxHeapMbPerHour })
      : undefined;
    const withFds = own.filter((s) => s.openFds !== undefined);
    const start = withFds[0]?.openFds;
    const end = withFds.at(-1)?.openFds;
    return {
      process,
      startRssBytes: own[0]?.rssBytes ?? 0,
      endRssBytes: own.at(-1)?.rssBytes ?? 0,
      fds: { ...(start === undefined ? {} : { start }), ...(end === undefined ? {} : { end }) },
      lives: new Set(own.map((s) => s.life)).size,
      fit,
      ...(node ? { heapFit } : {}),
      verdict: heapVerdict ?? rssVerdict,
      rssOnly:
        heapVerdict !== undefined && heapVerdict !== 'too steep' && rssVerdict === 'too steep',
    };
  });
}

/** Why the run fails; empty when it passes. */
export function failures(r: SoakReport): string[] {
  const out: string[] = [];
  if (r.ledger.accepted === 0) out.push('no event was accepted: the load never ran');
  if (r.ledger.missing > 0)
    out.push(`${r.ledger.missing} accepted event(s) never arrived at their recipient`);
  if (r.misrouted > 0) out.push(`${r.misrouted} event(s) reached another recipient's socket`);
  if (r.push) out.push(...pushFailures(r.push));
  for (const row of r.rows) {
    if (row.verdict !== 'too steep') continue;
    const rss = `RSS grew ${row.fit.mbPerHour?.toFixed(1)} MB/h after warm-up`;
    out.push(
      row.heapFit
        ? `${row.process}: heap after GC grew ${row.heapFit.mbPerHour?.toFixed(1)} MB/h after warm-up (at most ${r.maxHeapSlopeMbPerH}); ${rss}`
        : `${row.process}: ${rss} (at most ${r.maxSlopeMbPerH})`,
    );
  }
  for (const c of r.leftovers) {
    if (c.found > c.allowed) out.push(`${c.what}: ${c.found} at the end, at most ${c.allowed}`);
  }
  return out;
}

const mb = (bytes: number) => (bytes / MB).toFixed(1);
const min = (ms: number) => (ms / 60_000).toFixed(1);
const slope = (fit: SlopeFit) => (fit.mbPerHour === undefined ? 'n/a' : fit.mbPerHour.toFixed(1));

/** The run's summary as markdown: per-process memory, the delivery check, the leftovers. */
export function summaryMarkdown(r: SoakReport): string {
  const fails = failures(r);
  const l = r.ledger;
  const refused = Object.entries(l.refused)
    .map(([status, n]) => `${n} × ${status}`)
    .join(', ');
  const lines = [
    `# Soak ${r.startedAt}: ${fails.length === 0 ? 'passed' : 'FAILED'}`,
    '',
    `${r.minutes} minute(s) of load, then ${(r.drainMs / 1000).toFixed(1)} s until every accepted event had arrived (or the bound). ` +
      `Slope: least squares over each life's samples from ${min(r.warmupMs)} min after it started; ` +
      `judged only over at least ${min(r.slopeMinWindowMs)} min of such samples, else reported: a Node service's heap after GC at most ${r.maxHeapSlopeMbPerH} MB/h, ` +
      `the other processes' RSS at most ${r.maxSlopeMbPerH} MB/h (a Node service's RSS above it is flagged "RSS only" while its heap after GC stays within its limit).`,
    '',
    '| process | start RSS MB | end RSS MB | open fds start → end | lives | RSS slope MB/h | heap after GC slope MB/h | fit window min | verdict |',
    '| ------- | -----------: | ---------: | -------------------: | ----: | -------------: | -----------------------: | -------------: | ------- |',
    ...r.rows.map(
      (p) =>
        `| ${p.process} | ${mb(p.startRssBytes)} | ${mb(p.endRssBytes)} | ${p.fds.start ?? '?'} → ${p.fds.end ?? '?'} | ${p.lives} | ${slope(p.fit)} | ${p.heapFit ? slope(p.heapFit) : '–'} | ${min(p.fit.windowMs)} | ${p.verdict}${p.rssOnly ? ' (RSS only)' : ''} |`,
    ),
    '',
    '| events | count |',
    '| ------ | ----: |',
    `| accepted (200/202) | ${l.accepted} (notify ${l.acceptedBy.notify}, batch ${l.acceptedBy.batch}, rt.dispatch ${l.acceptedBy.nats}) |`,
    `| delivered (by id, to their recipient) | ${l.delivered} |`,
    `| duplicated (copies beyond the first) | ${l.duplicates} |`,
    `| missing | ${l.missing} |`,
    `| misrouted | ${r.misrouted} |`,
    `| arrived but never answered 200/202 | ${l.unanswered} |`,
    `| refused | ${refused || 'none'} |`,
    `| no answer (transport error) | ${l.failed} |`,
    ...(r.push
      ? [
          `| push key: accepted / pushed (distinct ids) | ${r.push.accepted} / ${r.push.events} in ${r.push.pushes} push(es) |`,
          `| push key: pushes that failed to decrypt or verify / misrouted ids / ids never answered 200/202 | ${r.push.broken} / ${r.push.misrouted} / ${r.push.unanswered} |`,
        ]
      : []),
    '',
    '| left at the end | found | allowed |',
    '| --------------- | ----: | ------: |',
    ...r.leftovers.map((c) => `| ${c.what} | ${c.found} | ${c.allowed} |`),
    '',
    `Restarts: ${r.restarts.map((x) => `${x.process} at ${min(x.t * 1000)} min`).join(', ') || 'none'}.`,
    ...r.notes.map((n) => `${n}`),
    '',
    ...(fails.length === 0 ? [] : ['## Failures', '', ...fails.map((f) => `- ${f}`), '']),
  ];
  return `${lines.join('\n')}\n`;
}
