import { mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { BenchConfig } from '../config.js';
import { REPO_ROOT } from '../env/node-process.js';
import { DOC_BLOCKS, updateBenchmarksDoc } from './docs-file.js';
import { renderMarkdown } from './markdown.js';
import { peerCheck } from './peers.js';
import type { BenchResults } from './results.js';

/** The run's settings as the report's header lists them. */
export function settingsOf(c: BenchConfig): Record<string, string | number | boolean> {
  return {
    servers: c.runtime === 'dist' ? 'dist (node)' : 'source (tsx)',
    measureMs: c.measureMs,
    concurrency: c.concurrency,
    warmupMs: c.warmupMs,
    batchSize: c.batchSize,
    payloadBytes: c.payloadBytes,
    latencyLoads: c.latencyLoads.join(','),
    latencySockets: c.latencySockets,
    recipients: c.recipients.join(','),
    drainOne: c.drainOne,
    drainMany: `${c.drainMany}×${c.drainEach}`,
    memoryLevels: c.memoryLevels.join(','),
    capacityMax: c.capacityMax,
    capacityStep: c.capacityStep,
    probeP99Ms: c.probeP99Ms,
    connectConcurrency: c.connectConcurrency,
    drainConnectConcurrency: c.drainConnectConcurrency,
    ...(c.statusOff ? { statusOff: true } : {}),
    ...(Object.keys(c.edgeEnv).length > 0 ? { edgeEnv: pairsText(c.edgeEnv) } : {}),
    ...(Object.keys(c.ingressEnv).length > 0 ? { ingressEnv: pairsText(c.ingressEnv) } : {}),
    ...(c.figures.has('7')
      ? {
          webhookBacklog: c.webhookBacklog,
          webhookLoad: c.webhookLoad,
          webhookTrust: c.webhookTrust,
        }
      : {}),
    ...(c.figures.has('8')
      ? { pushBacklog: c.pushBacklog, pushAfterMs: c.pushAfterMs, pushTrust: c.pushTrust }
      : {}),
    ...(Object.keys(c.statusEnv).length > 0 ? { statusEnv: pairsText(c.statusEnv) } : {}),
  };
}

/**
 * Writes a run's results: the JSON (stamped, and as the latest) and the Markdown report under
 * BENCH_OUT_DIR, docs/benchmarks.md when asked (BENCH_WRITE_DOCS) and the run was complete, and
 * the report to stdout.
 */
export function writeResults(
  config: BenchConfig,
  results: BenchResults,
  log: (message: string) => void,
): void {
  const dir = resolve(REPO_ROOT, config.outDir);
  mkdirSync(dir, { recursive: true });
  const stamp = results.meta.date.replace(/[:.]/g, '-');
  const name = config.quick ? 'quick' : 'full';
  const json = `${JSON.stringify(results, null, 2)}\n`;
  writeFileSync(join(dir, `${name}-${stamp}.json`), json);
  writeFileSync(join(dir, `${name}-latest.json`), json);
  const markdown = renderMarkdown(results);
  writeFileSync(join(dir, `${name}-latest.md`), markdown);
  log(`raw results: ${join(config.outDir, `${name}-${stamp}.json`)}`);
  if (config.writeDocs && results.meta.stoppedEarly === undefined) {
    const blocks = docBlocksOf(results);
    updateBenchmarksDoc(join(REPO_ROOT, 'docs', 'benchmarks.md'), blocks);
    log(`docs/benchmarks.md updated (figures ${blocks.flatMap((b) => b.block.figures).join(',')})`);
  }
  process.stdout.write(markdown);
  const failed = results.figures
    .flatMap((f) => [...f.checks, ...(f.peers ?? []).flatMap((l) => peerCheck(l) ?? [])])
    .filter((c) => c.pass === false);
  if (failed.length > 0) log(`${failed.length} target(s) missed: see the report`);
}

/** Each block of docs/benchmarks.md the run measured figures of, with its figures' report. */
export function docBlocksOf(results: BenchResults) {
  return DOC_BLOCKS.flatMap((block) => {
    const figures = results.figures.filter((f) => block.figures.includes(f.id));
    return figures.length === 0
      ? []
      : [{ block, markdown: renderMarkdown({ ...results, figures }) }];
  });
}

function pairsText(env: Record<string, string>): string {
  return Object.entries(env)
    .map(([k, v]) => `${k}=${v}`)
    .join(',');
}
