import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import type { FigureId } from '../config.js';

export const BEGIN =
  '<!-- bench:results:begin (written by `make bench`; edit outside these markers) -->';
export const END = '<!-- bench:results:end -->';

/** Where a run's figures go in docs/benchmarks.md: each block between markers of its own. */
export interface DocBlock {
  begin: string;
  end: string;
  figures: readonly FigureId[];
}

/**
 * The blocks of docs/benchmarks.md `make bench` writes. The webhooks (figure 7), push (figure 8)
 * the Pusher door (figure 9) and topics (figure 10) have their own, so a run of one of them alone leaves the run of record of the others as it is.
 */
export const DOC_BLOCKS: readonly DocBlock[] = [
  { begin: BEGIN, end: END, figures: ['1', '2', '3', '4', '5', '6'] },
  {
    begin:
      '<!-- bench:webhooks:begin (written by `make bench` with figure 7; edit outside these markers) -->',
    end: '<!-- bench:webhooks:end -->',
    figures: ['7'],
  },
  {
    begin:
      '<!-- bench:push:begin (written by `make bench` with figure 8; edit outside these markers) -->',
    end: '<!-- bench:push:end -->',
    figures: ['8'],
  },
  {
    begin:
      '<!-- bench:pusher:begin (written by `make bench` with figure 9; edit outside these markers) -->',
    end: '<!-- bench:pusher:end -->',
    figures: ['9'],
  },
  {
    begin:
      '<!-- bench:topics:begin (written by `make bench` with figure 10; edit outside these markers) -->',
    end: '<!-- bench:topics:end -->',
    figures: ['10'],
  },
];

/**
 * Puts the generated block between the markers of docs/benchmarks.md and leaves everything else
 * in the file (the method, the analysis, other teams' sections) as it is. Without markers the block
 * is appended; without a file one is created.
 */
export function spliceResults(
  doc: string | undefined,
  block: string,
  markers: Pick<DocBlock, 'begin' | 'end'> = { begin: BEGIN, end: END },
): string {
  const { begin: open, end: close } = markers;
  const wrapped = `${open}\n\n${block.trimEnd()}\n\n${close}`;
  if (doc === undefined) return `# Benchmarks\n\n${wrapped}\n`;
  const begin = doc.indexOf(open);
  const end = doc.indexOf(close);
  if (begin === -1 || end === -1 || end < begin) return `${doc.trimEnd()}\n\n${wrapped}\n`;
  return doc.slice(0, begin) + wrapped + doc.slice(end + close.length);
}

/** Writes each block's markdown (`blocks`: the block and what goes in it) into the file. */
export function updateBenchmarksDoc(
  path: string,
  blocks: ReadonlyArray<{ block: DocBlock; markdown: string }>,
): void {
  let doc = existsSync(path) ? readFileSync(path, 'utf8') : undefined;
  for (const b of blocks) doc = spliceResults(doc, b.markdown, b.block);
  if (doc !== undefined) writeFileSync(path, doc);
}
