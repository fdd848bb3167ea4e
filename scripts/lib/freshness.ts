import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';

/**
 * Whether a build output is missing or older than any of its inputs (files or folders, walked):
 * the client packages' build scripts rebuild only then when asked `ifStale`.
 */
export async function isStale(output: string, inputs: readonly string[]): Promise<boolean> {
  const built = await stat(output).then(
    (s) => s.mtimeMs,
    () => 0,
  );
  if (built === 0) return true;
  for (const input of inputs) if ((await newest(input)) > built) return true;
  return false;
}

async function newest(path: string): Promise<number> {
  const s = await stat(path);
  if (!s.isDirectory()) return s.mtimeMs;
  let max = s.mtimeMs;
  for (const entry of await readdir(path)) max = Math.max(max, await newest(join(path, entry)));
  return max;
}
