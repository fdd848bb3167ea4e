import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { PlanCatalogue } from '@herald/proto';
import { runAdmin } from '../src/admin/cli.js';

export interface Run {
  status: number;
  stdout: string;
  stderr: string;
}

/** Writes a catalogue where PLANS_FILE can point, and returns the path. */
export function writeCatalogue(catalogue: PlanCatalogue | unknown): string {
  const file = join(mkdtempSync(join(tmpdir(), 'herald-plans-')), 'plans.json');
  writeFileSync(file, JSON.stringify(catalogue));
  return file;
}

/** Runs the admin CLI's code in this process (the child-process path is in admin-cli.test.ts). */
export async function inProcessAdmin(
  argv: string[],
  env: Record<string, string | undefined>,
): Promise<Run> {
  let stdout = '';
  let stderr = '';
  const status = await runAdmin(argv, {
    stdout: { write: (t: string) => (stdout += t) },
    stderr: { write: (t: string) => (stderr += t) },
    env,
  });
  return { status, stdout, stderr };
}
