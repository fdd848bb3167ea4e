import { existsSync, readFileSync, writeFileSync } from 'node:fs';

export const BEGIN =
  '<!-- bench:results:begin (written by `make bench`; edit outside these markers) -->';
export const END = '<!-- bench:results:end -->';

/**
 * Puts the generated block between the markers of docs/benchmarks.md and leaves everything else
 * in the file (the method, the analysis, other teams' sections) as it is. Without markers the block
 * is appended; without a file one is created.
 */
export function spliceResults(doc: string | undefined, block: string): string {
  const wrapped = `${BEGIN}\n\n${block.trimEnd()}\n\n${END}`;
  if (doc === undefined) return `# Benchmarks\n\n${wrapped}\n`;
  const begin = doc.indexOf(BEGIN);
  const end = doc.indexOf(END);
  if (begin === -1 || end === -1 || end < begin) return `${doc.trimEnd()}\n\n${wrapped}\n`;
  return doc.slice(0, begin) + wrapped + doc.slice(end + END.length);
}

export function updateBenchmarksDoc(path: string, block: string): void {
  const doc = existsSync(path) ? readFileSync(path, 'utf8') : undefined;
  writeFileSync(path, spliceResults(doc, block));
}
