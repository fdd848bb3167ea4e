import { describe, expect, it } from 'vitest';
import { DeliveryLedger } from './ledger.js';
import type { Sample } from './samples.js';
import { failures, processRows, type SoakReport, summaryMarkdown } from './summary.js';

const MB = 1024 * 1024;

function report(over: Partial<SoakReport> = {}): SoakReport {
  const ledger = new DeliveryLedger();
  ledger.accept('e1', 'r1', 'notify');
  ledger.arrive('e1', 'r1');
  return {
    startedAt: '2026-11-29T16:00:00Z',
    minutes: 3,
    drainMs: 1500,
    warmupMs: 36_000,
    maxSlopeMbPerH: 50,
    maxHeapSlopeMbPerH: 10,
    slopeMinWindowMs: 1_200_000,
    rows: [],
    ledger: ledger.counts(),
    misrouted: 0,
    leftovers: [{ what: 'consumers', found: 3, allowed: 3 }],
    restarts: [{ t: 72, process: 'socket-edge' }],
    notes: ['churn: 10 sockets'],
    ...over,
  };
}

describe('processRows', () => {
  it('gives start and end RSS, lives and the verdict of each process', () => {
    const samples: Sample[] = [];
    // 1 MB a minute: 60 MB/h, judged over a window of 30 minutes after a 1-minute warm-up.
    for (let m = 0; m <= 31; m++)
      samples.push({ t: m * 60, process: 'a', life: '1', rssBytes: (100 + m) * MB });
    samples.push(
      { t: 0, process: 'b', life: '1', rssBytes: MB, openFds: 20 },
      { t: 60, process: 'b', life: '2', rssBytes: 2 * MB, openFds: 24 },
      { t: 70, process: 'b', life: '2', rssBytes: 2 * MB },
    );
    const rows = processRows(samples, {
      warmupMs: 60_000,
      maxMbPerHour: 50,
      maxHeapMbPerHour: 10,
      minWindowMs: 1_800_000,
    });
    expect(rows[0]).toMatchObject({
      process: 'a',
      startRssBytes: 100 * MB,
      endRssBytes: 131 * MB,
      fds: {},
      lives: 1,
      verdict: 'too steep',
    });
    expect(rows[0]?.fit.mbPerHour).toBeCloseTo(60, 6);
    expect(rows[1]).toMatchObject({
      process: 'b',
      fds: { start: 20, end: 24 },
      lives: 2,
      verdict: 'not judged',
    });
  });
});

describe('processRows of a Node service (heap after GC reported)', () => {
  /** 31 minutes of one life: RSS +1 MB a minute (60 MB/h), heap after GC + `heapMbPerMin`. */
  function service(heapMbPerMin: number): Sample[] {
    return Array.from({ length: 32 }, (_, m) => ({
      t: m * 60,
      process: 'socket-edge',
      life: '1',
      rssBytes: (100 + m) * MB,
      heapAfterGcBytes: (30 + heapMbPerMin * m) * MB,
    }));
  }
  const opts = { warmupMs: 60_000, maxMbPerHour: 50, maxHeapMbPerHour: 10, minWindowMs: 1_800_000 };

  it('passes RSS growth while the heap after GC is flat, flagged "RSS only"', () => {
    const [row] = processRows(service(0), opts);
    expect(row).toMatchObject({ verdict: 'ok', rssOnly: true });
    expect(row?.heapFit?.mbPerHour).toBeCloseTo(0, 6);
    const md = summaryMarkdown(report({ rows: row ? [row] : [] }));
    expect(md).toContain(
      '| socket-edge | 100.0 | 131.0 | ? → ? | 1 | 60.0 | 0.0 | 30.0 | ok (RSS only) |',
    );
    expect(failures(report({ rows: row ? [row] : [] }))).toEqual([]);
  });

  it('fails a heap after GC that grows beyond its limit, naming both slopes', () => {
    // 0.2 MB a minute: 12 MB/h, above 10.
    const [row] = processRows(service(0.2), opts);
    expect(row).toMatchObject({ verdict: 'too steep', rssOnly: false });
    expect(failures(report({ rows: row ? [row] : [] }))).toEqual([
      'socket-edge: heap after GC grew 12.0 MB/h after warm-up (at most 10); RSS grew 60.0 MB/h after warm-up',
    ]);
  });
});

describe('failures', () => {
  it('passes a run whose every event arrived and nothing was left over', () => {
    expect(failures(report())).toEqual([]);
  });

  it('names each failure: missing events, misrouted ones, a steep slope, a leftover', () => {
    const ledger = new DeliveryLedger();
    ledger.accept('e1', 'r1', 'batch');
    const steep = {
      process: 'socket-edge',
      startRssBytes: 0,
      endRssBytes: 0,
      fds: {},
      lives: 2,
      verdict: 'too steep' as const,
      rssOnly: false,
      fit: { mbPerHour: 80, points: 100, windowMs: 2_000_000 },
    };
    expect(
      failures(
        report({
          ledger: ledger.counts(),
          misrouted: 2,
          rows: [steep],
          leftovers: [{ what: 'consumers', found: 4, allowed: 3 }],
        }),
      ),
    ).toEqual([
      '1 accepted event(s) never arrived at their recipient',
      "2 event(s) reached another recipient's socket",
      'socket-edge: RSS grew 80.0 MB/h after warm-up (at most 50)',
      'consumers: 4 at the end, at most 3',
    ]);
    expect(failures(report({ ledger: new DeliveryLedger().counts() }))).toEqual([
      'no event was accepted: the load never ran',
    ]);
  });
});

describe('summaryMarkdown', () => {
  it('is a table per process, the event counts, the leftovers and the restarts', () => {
    const row = {
      process: 'auth',
      startRssBytes: 100 * MB,
      endRssBytes: 110 * MB,
      fds: { start: 30, end: 31 },
      lives: 1,
      verdict: 'not judged' as const,
      rssOnly: false,
      fit: { mbPerHour: 12.34, points: 10, windowMs: 120_000 },
    };
    const md = summaryMarkdown(report({ rows: [row] }));
    expect(md).toContain('# Soak 2026-11-29T16:00:00Z: passed');
    expect(md).toContain('| auth | 100.0 | 110.0 | 30 → 31 | 1 | 12.3 | – | 2.0 | not judged |');
    expect(md).toContain('| accepted (200/202) | 1 (notify 1, batch 0, rt.dispatch 0) |');
    expect(md).toContain('| consumers | 3 | 3 |');
    expect(md).toContain('Restarts: socket-edge at 1.2 min.');
    expect(md).not.toContain('## Failures');
  });
});
