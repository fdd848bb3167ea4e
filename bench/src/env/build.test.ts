import { mkdirSync, mkdtempSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildOrder, isStale } from './build.js';

describe('production build of what the bench runs', () => {
  it('orders a service after every workspace it imports, each once', () => {
    const order = buildOrder(['services/ingress-api', 'services/socket-edge']);
    expect(order.at(-1)).toBe('services/socket-edge');
    expect(order).toContain('services/ingress-api');
    for (const dep of ['proto', 'lib/kit', 'lib/queue']) {
      expect(order.indexOf(dep)).toBeLessThan(order.indexOf('services/ingress-api'));
    }
    expect(new Set(order).size).toBe(order.length);
    // The test kit has no build and is no run-time dependency.
    expect(order).not.toContain('lib/testkit');
  });

  it('calls dist/ stale when missing or older than a source or config file, not for a test file', () => {
    const root = mkdtempSync(join(tmpdir(), 'bench-build-'));
    const ws = join(root, 'w');
    mkdirSync(join(ws, 'src'), { recursive: true });
    writeFileSync(join(ws, 'src', 'main.ts'), 'x');
    writeFileSync(join(ws, 'package.json'), '{}');
    const at = (file: string, s: number) => utimesSync(file, s, s);
    at(join(ws, 'src', 'main.ts'), 1000);
    at(join(ws, 'package.json'), 1000);
    expect(isStale('w', root)).toBe(true);
    mkdirSync(join(ws, 'dist'));
    writeFileSync(join(ws, 'dist', 'main.js'), 'x');
    at(join(ws, 'dist', 'main.js'), 2000);
    expect(isStale('w', root)).toBe(false);
    writeFileSync(join(ws, 'src', 'main.test.ts'), 'x');
    at(join(ws, 'src', 'main.test.ts'), 3000);
    expect(isStale('w', root)).toBe(false);
    at(join(ws, 'src', 'main.ts'), 3000);
    expect(isStale('w', root)).toBe(true);
    at(join(ws, 'src', 'main.ts'), 1000);
    at(join(ws, 'package.json'), 3000);
    expect(isStale('w', root)).toBe(true);
  });
});
