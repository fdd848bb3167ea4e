import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { which } from '@herald/testkit';
import { REPO_ROOT } from './node-process.js';

const execFileAsync = promisify(execFile);

/** The one place Centrifugo's version is pinned, read by `make deps-bench` and by the bench alike. */
const PIN_FILE = join('scripts', 'lib', 'centrifugo-bin.sh');

/** The pinned Centrifugo release, e.g. `6.9.1`. */
export function pinnedCentrifugoVersion(root = REPO_ROOT): string {
  const text = readFileSync(join(root, PIN_FILE), 'utf8');
  const m = /^CENTRIFUGO_VERSION=(\d+\.\d+\.\d+)$/m.exec(text);
  if (!m?.[1]) throw new Error(`${PIN_FILE} pins no CENTRIFUGO_VERSION=X.Y.Z`);
  return m[1];
}

/** The version `centrifugo version` reports (`Centrifugo v6.9.1 (Go version: …)`), or undefined. */
export function parseCentrifugoVersion(output: string): string | undefined {
  return /^Centrifugo v?(\d+\.\d+\.\d+)/m.exec(output)?.[1];
}

export type CentrifugoBinary =
  | { found: true; bin: string; version: string }
  | {
      found: false;
      reason: string;
      /** True when the run must fail (Go is here, so `make deps-bench` can build it) rather than skip. */
      fatal: boolean;
    };

/**
 * The Centrifugo the bench runs: `.bin/centrifugo` at the pinned version, as `make deps-bench` builds it.
 * Without Go nothing can build it, and the bench runs without the Centrifugo baselines, saying
 * why; with Go present a missing or stale build is an error (run `make deps-bench`), so CI cannot lose
 * the baseline unnoticed.
 */
export async function findCentrifugo(
  env: Record<string, string | undefined> = process.env,
): Promise<CentrifugoBinary> {
  const want = pinnedCentrifugoVersion();
  const bin = join(env.HERALD_BIN_DIR ?? join(REPO_ROOT, '.bin'), 'centrifugo');
  let have: string | undefined;
  if (existsSync(bin)) {
    try {
      have = parseCentrifugoVersion((await execFileAsync(bin, ['version'])).stdout);
    } catch {
      have = undefined;
    }
  }
  const hasGo = (await which('go', ['/usr/local/go/bin'])) !== undefined;
  return centrifugoVerdict({ bin, have, want, hasGo });
}

/** Whether the build at `bin` (reporting version `have`, if any) is usable, and if not what to say. */
export function centrifugoVerdict(o: {
  bin: string;
  have: string | undefined;
  want: string;
  hasGo: boolean;
}): CentrifugoBinary {
  if (o.have === o.want) return { found: true, bin: o.bin, version: o.have };
  const what = o.have
    ? `${o.bin} is v${o.have}, not the pinned v${o.want}`
    : `Centrifugo v${o.want} is not built (${o.bin} is missing)`;
  return o.hasGo
    ? {
        found: false,
        fatal: true,
        reason: `${what}: run \`make deps-bench\`, which builds it with go install`,
      }
    : {
        found: false,
        fatal: false,
        reason: `${what} and Go is not installed, so \`make deps-bench\` cannot build it: install Go (https://go.dev/dl) and run \`make deps-bench\``,
      };
}
