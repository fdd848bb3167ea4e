import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { extraCaFile } from './extra-cas.js';

describe('extraCaFile', () => {
  it('names no file for none, the file itself for one, and joins several into a new one', () => {
    const dir = mkdtempSync(join(tmpdir(), 'bench-cas-test-'));
    const a = join(dir, 'a.pem');
    const b = join(dir, 'b.pem');
    writeFileSync(a, '-----BEGIN CERTIFICATE-----\nA\n-----END CERTIFICATE-----\n');
    writeFileSync(b, '-----BEGIN CERTIFICATE-----\nB\n-----END CERTIFICATE-----');
    expect(extraCaFile([])).toBeUndefined();
    expect(extraCaFile([a])).toBe(a);
    const both = extraCaFile([a, b]) as string;
    expect(both).not.toBe(a);
    expect(readFileSync(both, 'utf8')).toBe(
      '-----BEGIN CERTIFICATE-----\nA\n-----END CERTIFICATE-----\n-----BEGIN CERTIFICATE-----\nB\n-----END CERTIFICATE-----\n',
    );
  });
});
