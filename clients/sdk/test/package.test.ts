import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import * as sdk from '@herald/sdk';
import { describe, expect, it } from 'vitest';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const read = (p: string) => readFileSync(join(ROOT, p), 'utf8');
const pkg = JSON.parse(read('package.json'));

describe('the package as built', () => {
  it('is what `@herald/sdk` resolves to in these tests (dist/, not src/)', async () => {
    const dist = await import('../dist/index.js');
    expect(sdk.Herald).toBe(dist.Herald);
  });

  it('declares ESM, CJS, types and a browser build in its exports, with no side effects', () => {
    expect(pkg.sideEffects).toBe(false);
    expect(pkg.exports['.']).toEqual({
      'react-native': { types: './dist/index.d.ts', default: './dist/browser.js' },
      browser: { types: './dist/index.d.ts', default: './dist/browser.js' },
      import: { types: './dist/index.d.ts', default: './dist/index.js' },
      require: { types: './dist/index.d.cts', default: './dist/index.cjs' },
    });
    // The server entry: Node (and server runtimes), never a browser condition.
    expect(pkg.exports['./server']).toEqual({
      import: { types: './dist/server.d.ts', default: './dist/server.js' },
      require: { types: './dist/server.d.cts', default: './dist/server.cjs' },
    });
    // @herald/proto is bundled in: at run time only jose, which only the server entry imports,
    // and the optional `ws` peer.
    expect(pkg.dependencies).toEqual({ jose: expect.any(String) });
    expect(pkg.peerDependenciesMeta).toEqual({ ws: { optional: true } });
  });

  it('loads through require() with the same surface as the ESM build', () => {
    const cjs = createRequire(import.meta.url)(join(ROOT, 'dist', 'index.cjs'));
    expect(Object.keys(cjs).sort()).toEqual(Object.keys(sdk).sort());
    expect(Object.keys(sdk).sort()).toEqual([
      'DispatchStatus',
      'Herald',
      'HeraldError',
      'isUuidV4',
    ]);
    expect(cjs.DispatchStatus).toEqual({
      sent: 'sent',
      queued: 'User offline, notification saved',
      accepted: 'accepted',
      failed: 'Failed to send/save notification',
    });
  });

  it('ships declarations that stand alone: proto inlined, no zod, no private package', () => {
    const dts = read('dist/index.d.ts');
    expect(dts).not.toMatch(/from ['"]@herald\/proto/);
    expect(dts).not.toMatch(/from ['"]zod|Zod[A-Z]/);
    // Internals stay internal: only the public surface is declared.
    expect(dts).not.toMatch(/class (Connection|Listeners|SubscriptionHandle)|interface Resolved/);
    expect(dts).not.toMatch(/^import /m);
    expect(dts).toContain('declare class Herald');
    expect(dts).toContain('type ErrorCode = keyof typeof ErrorCodes');
    expect(read('dist/index.d.cts')).toBe(dts);
  });

  it('keeps ws out of the browser bundle and Node built-ins out of every build', () => {
    const browser = read('dist/browser.js');
    const esm = read('dist/index.js');
    const imports = (code: string) =>
      [...code.matchAll(/(?:import\(|from\s*|require\()\s*["']([^"']+)["']/g)].map((m) => m[1]);
    expect(imports(browser)).toEqual([]);
    expect(/\bprocess\.|\bBuffer\b|node:/.test(browser)).toBe(false);
    // The Node builds reach for ws only lazily, from inside a function, and for nothing else.
    expect(imports(esm)).toEqual(['ws']);
    expect(esm).toContain('await import("ws")');
    expect(/node:/.test(esm)).toBe(false);
    expect(imports(read('dist/index.cjs'))).toEqual(['ws']);
  });

  it('builds @herald/sdk/server apart: tokens and topics, jose imported there and nowhere else', async () => {
    const exported = [
      'DispatchStatus',
      'HeraldError',
      'HeraldServer',
      'TokenInputError',
      'recipientToken',
    ];
    const server = await import('@herald/sdk/server');
    expect(Object.keys(server).sort()).toEqual(exported);
    const cjs = createRequire(import.meta.url)(join(ROOT, 'dist', 'server.cjs'));
    expect(Object.keys(cjs).sort()).toEqual(exported);
    const imports = (code: string) =>
      [...code.matchAll(/(?:import\(|from\s*|require\()\s*["']([^"']+)["']/g)].map((m) => m[1]);
    // ws as the core's lazy import (the server's Herald is the core's, plus topics).
    expect(imports(read('dist/server.js')).sort()).toEqual(['jose', 'ws']);
    expect(imports(read('dist/server.cjs')).sort()).toEqual(['jose', 'ws']);
    // No signing or topics code in what browsers load: not jose, not the token's claims.
    for (const file of ['dist/browser.js', 'dist/index.js', 'dist/index.cjs']) {
      expect(read(file)).not.toMatch(
        /jose|SignJWT|recipientToken|hk_sign_|\/topics\/|HeraldServer/,
      );
    }
    const dts = read('dist/server.d.ts');
    expect(dts).toContain('declare function recipientToken');
    expect(dts).not.toMatch(/from ['"]@herald\/proto/);
    expect(read('dist/server.d.cts')).toBe(dts);
  });

  it('builds @herald/sdk/push and @herald/sdk/sw apart: the core bundle carries none of push', async () => {
    expect(pkg.exports['./push']).toEqual({ types: './dist/push.d.ts', default: './dist/push.js' });
    expect(pkg.exports['./sw']).toBe('./dist/herald-sw.js');
    const imports = (code: string) =>
      [...code.matchAll(/(?:import\(|from\s*|require\()\s*["']([^"']+)["']/g)].map((m) => m[1]);
    // Both are self-contained (a browser loads them as they are), with no Node built-ins.
    for (const file of ['dist/push.js', 'dist/herald-sw.js']) {
      expect(imports(read(file))).toEqual([]);
      expect(/\bprocess\.|\bBuffer\b|node:/.test(read(file))).toBe(false);
    }
    // The worker is a classic script (importScripts-able): no ES module syntax at top level.
    expect(read('dist/herald-sw.js')).not.toMatch(/^\s*(import|export)\b/m);
    for (const file of ['dist/browser.js', 'dist/index.js', 'dist/index.cjs']) {
      expect(read(file)).not.toMatch(/pushManager|vapid|showNotification|HeraldPush/i);
    }
    const dts = read('dist/push.d.ts');
    expect(dts).toContain('declare class HeraldPush');
    expect(dts).not.toMatch(/from ['"]@herald\/proto|^import /m);
  });

  it('keeps the minified browser bundle under 7.5 KB gzipped', () => {
    const size = gzipSync(readFileSync(join(ROOT, 'dist', 'browser.js')), { level: 9 }).length;
    expect(size).toBeLessThan(7.5 * 1024);
  });
});
