import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The repo root: the nearest ancestor of this file holding the workspace package.json (the one
 * with `workspaces`). Found from the file's location rather than the working directory, so the
 * CLI and the service find `.data/` and `config/` wherever they are started from.
 */
export function repoRoot(
  from: string = dirname(fileURLToPath(import.meta.url)),
): string | undefined {
  for (let dir = from; ; dir = dirname(dir)) {
    const manifest = join(dir, 'package.json');
    if (existsSync(manifest)) {
      try {
        if (Array.isArray(JSON.parse(readFileSync(manifest, 'utf8')).workspaces)) return dir;
      } catch {
        // An unreadable manifest is not the root; keep looking.
      }
    }
    if (dirname(dir) === dir) return undefined;
  }
}
