import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { execFileAsync, which } from './exec.js';

const repoRoot = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');

/**
 * The nats-server version Herald pins: the tag of the nats image in deploy/docker-compose.yml, the
 * one place `make deps`, `make dev`, bench and the tests all read (scripts/lib/nats-bin.sh).
 */
export function pinnedNatsVersion(): string {
  const compose = readFileSync(join(repoRoot, 'deploy', 'docker-compose.yml'), 'utf8');
  const match = /^\s*image:\s*nats:(\d+\.\d+\.\d+)/m.exec(compose);
  if (!match?.[1])
    throw new Error('deploy/docker-compose.yml pins no nats image (image: nats:X.Y.Z-alpine)');
  return match[1];
}

/** True when dotted version `have` is at least `want`. */
export function versionAtLeast(have: string, want: string): boolean {
  const a = have.split('.').map(Number);
  const b = want.split('.').map(Number);
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    const d = (a[i] ?? 0) - (b[i] ?? 0);
    if (d !== 0) return d > 0;
  }
  return true;
}

async function versionOf(bin: string): Promise<string | undefined> {
  try {
    const { stdout } = await execFileAsync(bin, ['--version']);
    return /nats-server: v?(\d+\.\d+\.\d+)/.exec(stdout)?.[1];
  } catch {
    return undefined;
  }
}

let resolved: Promise<{ bin: string; version: string }> | undefined;

/**
 * The nats-server every test and bench run starts: the project's .bin/ build (what `make deps`
 * installs with `go install`), else one on PATH at least as new as the pin. Debian's 2.9.10 is
 * refused with a message saying how to get the right one.
 */
export function natsServerBinary(): Promise<{ bin: string; version: string }> {
  resolved ??= (async () => {
    const want = pinnedNatsVersion();
    const local = join(process.env.HERALD_BIN_DIR ?? join(repoRoot, '.bin'), 'nats-server');
    const onPath = await which('nats-server');
    for (const bin of [existsSync(local) ? local : undefined, onPath]) {
      if (!bin) continue;
      const version = await versionOf(bin);
      if (version && versionAtLeast(version, want)) return { bin, version };
    }
    throw new Error(
      `nats-server ${want} or newer is not installed (found ${onPath ?? 'none'}): run \`make deps\`, which builds it with go install into .bin/`,
    );
  })();
  return resolved;
}
