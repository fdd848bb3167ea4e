import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository root, found from this file's location (services/retention/src). */
export const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');

/** `make dev` writes NATS_URL (and DATABASE_URL) here. */
export const DEV_ENV_FILE = join(REPO_ROOT, '.data', 'dev.env');

/** Parses `KEY=VALUE` lines; blank lines and `#` comments are skipped, surrounding quotes dropped. */
export function parseEnvFile(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) continue;
    const eq = line.indexOf('=');
    if (eq <= 0) continue;
    const key = line.slice(0, eq).trim();
    let value = line.slice(eq + 1).trim();
    if (value.length >= 2 && (value[0] === '"' || value[0] === "'") && value.at(-1) === value[0]) {
      value = value.slice(1, -1);
    }
    out[key] = value;
  }
  return out;
}

/**
 * The environment with `.data/dev.env` filled in under it: variables already set win, so an
 * explicit NATS_URL always points elsewhere. Without the file, the environment is returned as is.
 */
export function withDevEnv(
  env: Record<string, string | undefined>,
  file: string = DEV_ENV_FILE,
): { env: Record<string, string | undefined>; loaded: string | undefined } {
  if (env.NATS_URL !== undefined || !existsSync(file)) return { env, loaded: undefined };
  return { env: { ...parseEnvFile(readFileSync(file, 'utf8')), ...env }, loaded: file };
}
