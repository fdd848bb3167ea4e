import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { BEGIN, DOC_BLOCKS, END, spliceResults, updateBenchmarksDoc } from './docs-file.js';
import { renderMarkdown } from './markdown.js';
import type { BenchResults, FigureResult } from './results.js';
import { docBlocksOf } from './results-file.js';

const results: BenchResults = {
  meta: {
    date: '2026-11-21T09:00:00.000Z',
    commit: 'abc123',
    quick: false,
    runs: 5,
    rampRuns: 3,
    node: 'v20.20.2',
    natsServer: 'v2.9.10',
    machine: '2 × AMD EPYC',
    loadBefore: '0.50 0.40 0.30',
    loadAfter: '1.90 1.20 0.70',
    pinning: ['load generator → CPU 1'],
    settings: { measureMs: 1500 },
    elapsedMs: 500_000,
  },
  figures: [
    {
      id: '2',
      title: 'Online dispatch throughput',
      rows: [
        {
          figure: '2',
          metric: 'deliveries/s',
          subject: 'Herald POST /notify',
          role: 'herald',
          unit: 'deliveries/s',
          runs: [900, 1000, 1100],
          median: 1000,
        },
        {
          figure: '2',
          metric: 'deliveries/s',
          subject: 'raw ws',
          role: 'baseline',
          unit: 'deliveries/s',
          runs: [4000],
          median: 4000,
        },
      ],
      checks: [{ figure: '2', target: 'Herald ≥ 0.5× raw ws', measured: '0.25×', pass: false }],
      notes: ['a note'],
      elapsedMs: 1000,
    },
  ],
};

describe('renderMarkdown', () => {
  const md = renderMarkdown(results);

  it('states when, what and where it was measured, and how loaded the machine was', () => {
    expect(md).toContain('| commit | `abc123` |');
    expect(md).toContain('| nats-server | v2.9.10 |');
    expect(md).toContain('0.50 0.40 0.30 / 1.90 1.20 0.70');
    expect(md).toContain('| repetitions | median of 5 runs |');
    const withRamps = renderMarkdown({ ...results, figures: [...results.figures, figure('5')] });
    expect(withRamps).toContain('median of 5 runs (connection ramps of figures 5–6: 3)');
  });

  it('says when the deadline stopped the run before every figure was measured', () => {
    expect(md).not.toContain('incomplete');
    const cut = renderMarkdown({
      ...results,
      meta: { ...results.meta, stoppedEarly: 'figure 5 and 6 were not measured' },
    });
    expect(cut).toContain('| **incomplete** | figure 5 and 6 were not measured |');
  });

  it('lists every target with its verdict, and each row with median and spread', () => {
    expect(md).toContain('| 2 | Herald ≥ 0.5× raw ws | 0.25× | **missed** |');
    expect(md).toContain(
      '| deliveries/s | **Herald POST /notify** | 1,000 deliveries/s | 900 – 1,100 |',
    );
    expect(md).toContain('| deliveries/s | raw ws | 4,000 deliveries/s | – |');
    expect(md).toContain('- a note');
  });

  it('lists same-run ratios and, for a missed target, the profile’s top frames', () => {
    const fig = results.figures[0] as BenchResults['figures'][number];
    const withMore = renderMarkdown({
      ...results,
      figures: [
        {
          ...fig,
          ratios: [{ label: 'POST /notify ÷ Socket.IO', runs: [0.5, 0.75, 1], median: 0.75 }],
          profiles: [
            {
              server: 'ingress-api',
              busySamples: 1234,
              self: [{ name: 'writeBuffer node:internal/x:1', percent: 12.34 }],
              inclusive: [{ name: 'dispatch services/ingress-api/src/d.ts:3', percent: 80 }],
            },
          ],
        },
      ],
    });
    expect(withMore).toContain('| POST /notify ÷ Socket.IO | 0.75× | 0.50× – 1.00× |');
    expect(withMore).toContain(
      'Profile of ingress-api during this figure (1,234 busy samples): top frames by self time: `writeBuffer node:internal/x:1` 12.3%; project code, inclusive: `dispatch services/ingress-api/src/d.ts:3` 80.0%.',
    );
    expect(md).not.toContain('same-run ratio');
    expect(md).not.toContain('Profile of');
  });
});

/** A figure with one check and nothing else, for the report's grouping. */
function figure(id: FigureResult['id']): FigureResult {
  return {
    id,
    title: `Figure ${id}`,
    rows: [],
    checks: [{ figure: id, target: `target of ${id}`, measured: '1.00×', pass: true }],
    notes: [],
    elapsedMs: 1,
  };
}

describe('figure 7 in the report', () => {
  it("lists its target under issue 39's heading, never under issue 11's", () => {
    const md = renderMarkdown({ ...results, figures: [figure('2'), figure('7')] });
    const issue11 = md.indexOf("#### Issue 11's targets");
    const issue39 = md.indexOf("#### Issue 39's target");
    expect(issue11).toBeGreaterThan(-1);
    expect(issue39).toBeGreaterThan(issue11);
    expect(md.slice(issue11, issue39)).not.toContain('target of 7');
    expect(md.slice(issue39)).toContain('| 7 | target of 7 | 1.00× | met |');
    const alone = renderMarkdown({ ...results, figures: [figure('7')] });
    expect(alone).not.toContain("Issue 11's targets");
  });

  it('goes to a block of its own, so a run of figure 7 alone keeps the run of record of 1–6', () => {
    const [main, hooks] = DOC_BLOCKS as [(typeof DOC_BLOCKS)[0], (typeof DOC_BLOCKS)[0]];
    const dir = mkdtempSync(join(tmpdir(), 'bench-docs-'));
    const path = join(dir, 'benchmarks.md');
    writeFileSync(
      path,
      `# B\n\n${main.begin}\nrecord of 1-6\n${main.end}\n\n## Webhooks\n\n${hooks.begin}\nold 7\n${hooks.end}\n`,
    );
    const only7 = docBlocksOf({ ...results, figures: [figure('7')] });
    expect(only7.map((b) => b.block)).toEqual([hooks]);
    updateBenchmarksDoc(path, only7);
    const doc = readFileSync(path, 'utf8');
    expect(doc).toContain('record of 1-6');
    expect(doc).not.toContain('old 7');
    expect(doc).toContain('#### 7. Figure 7');
    const both = docBlocksOf({ ...results, figures: [figure('2'), figure('7')] });
    expect(both.map((b) => b.block)).toEqual([main, hooks]);
    expect(both[0]?.markdown).not.toContain('Figure 7');
    expect(both[1]?.markdown).not.toContain('Figure 2');
    updateBenchmarksDoc(path, both);
    const after = readFileSync(path, 'utf8');
    expect(after).not.toContain('record of 1-6');
    expect(after.indexOf('#### 2. Figure 2')).toBeLessThan(after.indexOf('## Webhooks'));
    expect(after.indexOf('#### 7. Figure 7')).toBeGreaterThan(after.indexOf('## Webhooks'));
  });
});

describe('spliceResults', () => {
  it('replaces only what lies between the markers, keeping every other section', () => {
    const doc = `# Benchmarks\n\nMethod.\n\n${BEGIN}\nold figures\n${END}\n\n## Retention\n\nTheirs.\n`;
    const out = spliceResults(doc, 'new figures');
    expect(out).toContain('Method.');
    expect(out).toContain('## Retention\n\nTheirs.');
    expect(out).toContain('new figures');
    expect(out).not.toContain('old figures');
    expect(spliceResults(out, 'newer')).toBe(out.replace('new figures', 'newer'));
  });

  it('appends the block to a document without markers, and creates one when there is none', () => {
    expect(spliceResults('# Benchmarks\n\n## Retention\n', 'figs')).toMatch(
      /## Retention\n\n<!-- bench:results:begin[^\n]*\n\nfigs\n\n<!-- bench:results:end -->\n$/,
    );
    expect(spliceResults(undefined, 'figs')).toMatch(/^# Benchmarks\n/);
  });
});

describe('figure 8 in the report', () => {
  it("lists its target under issue 40's heading and goes to a block of its own", () => {
    const md = renderMarkdown({ ...results, figures: [figure('7'), figure('8')] });
    const issue39 = md.indexOf("#### Issue 39's target");
    const issue40 = md.indexOf("#### Issue 40's target");
    expect(issue40).toBeGreaterThan(issue39);
    expect(md.slice(issue39, issue40)).not.toContain('target of 8');
    expect(md.slice(issue40)).toContain('| 8 | target of 8 | 1.00× | met |');
    const push = DOC_BLOCKS.find((b) => b.figures.includes('8'));
    const dir = mkdtempSync(join(tmpdir(), 'bench-docs-'));
    const path = join(dir, 'benchmarks.md');
    writeFileSync(path, `# B\n\n## Push\n\n${push?.begin}\nold 8\n${push?.end}\n`);
    const only8 = docBlocksOf({ ...results, figures: [figure('8')] });
    expect(only8.map((b) => b.block)).toEqual([push]);
    updateBenchmarksDoc(path, only8);
    const doc = readFileSync(path, 'utf8');
    expect(doc).not.toContain('old 8');
    expect(doc.indexOf('#### 8. Figure 8')).toBeGreaterThan(doc.indexOf('## Push'));
  });
});
