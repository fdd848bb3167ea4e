import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  centrifugoVerdict,
  parseCentrifugoVersion,
  pinnedCentrifugoVersion,
} from './centrifugo-binary.js';

describe('which Centrifugo the bench runs', () => {
  it('reads the pin from the one file make deps-bench reads', () => {
    const root = mkdtempSync(join(tmpdir(), 'pin-'));
    const dir = join(root, 'scripts', 'lib');
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'centrifugo-bin.sh'), 'X=1\nCENTRIFUGO_VERSION=6.9.1\n');
    expect(pinnedCentrifugoVersion(root)).toBe('6.9.1');
    writeFileSync(join(dir, 'centrifugo-bin.sh'), 'CENTRIFUGO_VERSION=latest\n');
    expect(() => pinnedCentrifugoVersion(root)).toThrow(/pins no CENTRIFUGO_VERSION/);
    expect(pinnedCentrifugoVersion()).toMatch(/^\d+\.\d+\.\d+$/);
  });

  it('reads the version a build reports', () => {
    expect(parseCentrifugoVersion('Centrifugo v6.9.1 (Go version: go1.26.8)\n')).toBe('6.9.1');
    // What a `go install` without the version stamped in reports: never taken for the pin.
    expect(parseCentrifugoVersion('Centrifugo v0.0.0 (Go version: go1.26.8)')).toBe('0.0.0');
    expect(parseCentrifugoVersion('command not found')).toBeUndefined();
  });

  const base = { bin: '/r/.bin/centrifugo', want: '6.9.1' };
  it('runs the build at the pin', () => {
    expect(centrifugoVerdict({ ...base, have: '6.9.1', hasGo: false })).toEqual({
      found: true,
      bin: base.bin,
      version: '6.9.1',
    });
  });

  it('fails the run when Go is here but the build is missing or stale: make deps-bench would build it', () => {
    for (const have of [undefined, '0.0.0', '6.8.4']) {
      const v = centrifugoVerdict({ ...base, have, hasGo: true });
      expect(v).toMatchObject({ found: false, fatal: true });
      if (!v.found) expect(v.reason).toMatch(/run `make deps-bench`/);
    }
  });

  it('skips Centrifugo, saying why, when Go is missing', () => {
    const v = centrifugoVerdict({ ...base, have: undefined, hasGo: false });
    expect(v).toMatchObject({ found: false, fatal: false });
    if (!v.found) {
      expect(v.reason).toContain('Centrifugo v6.9.1 is not built');
      expect(v.reason).toContain('Go is not installed');
    }
  });
});
