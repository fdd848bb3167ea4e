import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot } from '../repo-root.js';

/** Where `make dev` writes the settings of the stack it started, relative to the repo root. */
export const DEV_ENV_PATH = '.data/dev.env';

export interface AdminSettings {
  /** The environment to use: process variables over the dev stack's file, variable by variable. */
  env: Record<string, string | undefined>;
  /** The dev.env file read, if any (for error messages). */
  devEnvFile: string | undefined;
  /** Where dev.env was looked for. */
  devEnvPath: string | undefined;
}

/**
 * The CLI's settings. Variables set in the environment win; any left unset are read from the
 * repo's .data/dev.env, found from this file's location rather than the working directory, so
 * `npm run admin` talks to the stack `make dev` started from wherever it is run.
 */
export function loadAdminSettings(
  env: Record<string, string | undefined> = process.env,
  devEnvPath: string | undefined = defaultDevEnvPath(),
): AdminSettings {
  if (devEnvPath === undefined || !existsSync(devEnvPath)) {
    return { env, devEnvFile: undefined, devEnvPath };
  }
  const fromFile = parseDotEnv(readFileSync(devEnvPath, 'utf8'));
  const merged: Record<string, string | undefined> = { ...fromFile };
  for (const [name, value] of Object.entries(env)) {
    if (value !== undefined && value !== '') merged[name] = value;
  }
  return { env: merged, devEnvFile: devEnvPath, devEnvPath };
}

/** `KEY=VALUE` lines; blank lines, `#` comments, an `export ` prefix and quotes are tolerated. */
export function parseDotEnv(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of text.split(/\r?\n/)) {
    const m = /^\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.*?)\s*$/.exec(line);
    if (!m?.[1] || line.trimStart().startsWith('#')) continue;
    const raw = m[2] ?? '';
    const quoted = /^(["'])(.*)\1$/.exec(raw);
    out[m[1]] = quoted ? (quoted[2] ?? '') : raw;
  }
  return out;
}

/** `<repo root>/.data/dev.env`, the root found from this file's own location. */
export function defaultDevEnvPath(): string | undefined {
  const root = repoRoot();
  return root === undefined ? undefined : join(root, DEV_ENV_PATH);
}
