import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

export const execFileAsync = promisify(execFile);

/** Finds an executable on PATH or in the usual Debian locations; undefined when absent. */
export async function which(name: string, extraDirs: string[] = []): Promise<string | undefined> {
  const { existsSync } = await import('node:fs');
  const dirs = [
    ...(process.env.PATH ?? '').split(':'),
    '/usr/sbin',
    '/usr/local/bin',
    ...extraDirs,
  ];
  for (const dir of dirs) {
    const p = `${dir}/${name}`;
    if (dir && existsSync(p)) return p;
  }
  return undefined;
}
