import { readFileSync } from 'node:fs';
import type http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { dirname, join } from 'node:path';
import type { Duplex } from 'node:stream';
import tls from 'node:tls';
import { fileURLToPath } from 'node:url';
import { DispatchStatus } from '@herald/sdk';
import { makeCerts } from '@herald/testkit';
import { CHROMIUM_ARGS, CHROMIUM_PATH } from '@herald/testkit/browser';
import { type Browser, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recipient, type SdkStack } from './context.js';
import { snippet } from './readme.tests.js';

const HERE = dirname(fileURLToPath(import.meta.url));
const BUNDLE = join(HERE, '..', '..', 'dist', 'browser.js');

/** A tiny HTTPS origin serving the test page and the built browser bundle. */
export async function servePage(): Promise<{ origin: string; close: () => Promise<void> }> {
  const certs = await makeCerts();
  const files: Record<string, [string, string]> = {
    '/': ['text/html; charset=utf-8', join(HERE, 'fixtures', 'page.html')],
    '/herald.js': ['text/javascript; charset=utf-8', BUNDLE],
  };
  const server = https.createServer(
    { cert: readFileSync(certs.certFile), key: readFileSync(certs.keyFile) },
    (req, res) => {
      const file = files[new URL(req.url ?? '/', 'https://x').pathname];
      if (!file) return void res.writeHead(404).end();
      res
        .writeHead(200, { 'content-type': file[0], 'cache-control': 'no-store' })
        .end(readFileSync(file[1]));
    },
  );
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    origin: `https://127.0.0.1:${port}`,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

/**
 * A TLS proxy on an origin of its own, in front of the edge: while `down` it answers every
 * request, upgrade or plain GET, with a bodiless 502 and no CORS headers (a proxy whose upstream is
 * restarting); once up it forwards upgrades to the edge byte for byte. `upgrades` counts attempts.
 */
async function serveProxy(edgeUrl: string) {
  const certs = await makeCerts();
  const edge = new URL(edgeUrl);
  const state = { down: true, upgrades: 0 };
  const server = https.createServer(
    { cert: readFileSync(certs.certFile), key: readFileSync(certs.keyFile) },
    (_req, res) => void res.writeHead(502).end(),
  );
  server.on('upgrade', (req: http.IncomingMessage, socket: Duplex, head: Buffer) => {
    state.upgrades++;
    if (state.down) {
      socket.end('HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\nConnection: close\r\n\r\n');
      return;
    }
    const upstream = tls.connect({
      host: edge.hostname,
      port: Number(edge.port),
      rejectUnauthorized: false,
    });
    const lines = [`${req.method} ${req.url} HTTP/1.1`];
    for (let i = 0; i < req.rawHeaders.length; i += 2)
      lines.push(`${req.rawHeaders[i]}: ${req.rawHeaders[i + 1]}`);
    upstream.write(`${lines.join('\r\n')}\r\n\r\n`);
    if (head.length > 0) upstream.write(head);
    upstream.pipe(socket).pipe(upstream);
    upstream.on('error', () => socket.destroy());
    socket.on('error', () => upstream.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    state,
    wsUrl: `wss://127.0.0.1:${port}`,
    close: () => {
      server.closeAllConnections();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

export function browserTests(ctx: () => SdkStack): void {
  describe('headless Chromium', () => {
    let browser: Browser;
    let page: Page;
    let site: Awaited<ReturnType<typeof servePage>>;

    beforeAll(async () => {
      site = await servePage();
      browser = await chromium.launch({
        executablePath: CHROMIUM_PATH,
        args: [...CHROMIUM_ARGS],
      });
      page = await browser.newPage();
    });

    afterAll(async () => {
      await browser?.close();
      await site?.close();
    });

    type PageErrors = Array<{ code: string; kind: string; closeCode: number | null }>;
    const pageState = () =>
      page.evaluate(() => {
        const w = window as never as { heraldLog: string[]; heraldErrors: PageErrors };
        return { log: w.heraldLog, errors: w.heraldErrors };
      });

    it.each([
      ['origin_mismatch', 4403],
      ['invalid_api_key', 4401],
    ] as const)(
      '%s: refused sockets never show as connected in Chromium',
      async (code, closeCode) => {
        const { stack, newKey } = ctx();
        const apiKey =
          code === 'origin_mismatch'
            ? (await newKey({ client: 'web', domain: 'https://another.example.com' })).key
            : 'hk_test_not-a-key-anyone-issued-0123456789';
        const recipients = Array.from({ length: 8 }, () => recipient());
        await page.goto(`${site.origin}/`);
        await page.evaluate(
          (cfg) => (window as never as { startHerald(c: typeof cfg): void }).startHerald(cfg),
          { apiKey, wsUrl: stack.wsUrl, recipients },
        );
        await page.waitForFunction(
          (n) => (window as never as { heraldErrors: unknown[] }).heraldErrors.length === n,
          recipients.length,
          { timeout: 20_000 },
        );
        // Past the accept delay: a refused socket taken as accepted would have flipped by now.
        await page.waitForTimeout(1500);
        const { log, errors } = await pageState();
        expect(log).toEqual([]);
        expect(errors).toEqual(recipients.map(() => ({ code, kind: 'refused', closeCode })));
        await page.evaluate(() =>
          (window as never as { herald: { disconnect(): void } }).herald.disconnect(),
        );
      },
    );

    it('a wsUrl pointing at ingress-api is reported as a wrong endpoint in Chromium, not retried forever', async () => {
      const { stack, newKey } = ctx();
      const web = await newKey({ client: 'web', domain: site.origin });
      await page.goto(`${site.origin}/`);
      await page.evaluate(
        (cfg) => (window as never as { startHerald(c: typeof cfg): void }).startHerald(cfg),
        { apiKey: web.key, wsUrl: stack.baseUrl.replace('https:', 'wss:'), recipient: recipient() },
      );
      await page.waitForFunction(
        () => (window as never as { heraldErrors: unknown[] }).heraldErrors.length > 0,
        undefined,
        { timeout: 20_000 },
      );
      // Backoff cap is 1 s on the page: retries would have added errors or states by now.
      await page.waitForTimeout(3000);
      const { log, errors } = await pageState();
      expect(errors).toEqual([{ code: 'wrong_endpoint', kind: 'wrong_endpoint', closeCode: null }]);
      expect(log).toEqual([]);
      await page.evaluate(() =>
        (window as never as { herald: { disconnect(): void } }).herald.disconnect(),
      );
    });

    it('a cross-origin proxy answering 502 before the edge is up is retried, not called a wrong endpoint, in Chromium', async () => {
      const { stack, newKey, herald } = ctx();
      const web = await newKey({ client: 'web', domain: site.origin });
      const to = recipient();
      const proxy = await serveProxy(stack.wsUrl);
      try {
        await page.goto(`${site.origin}/`);
        await page.evaluate(
          (cfg) => (window as never as { startHerald(c: typeof cfg): void }).startHerald(cfg),
          { apiKey: web.key, wsUrl: proxy.wsUrl, recipient: to },
        );
        await page.waitForFunction(
          () => (window as never as { heraldErrors: unknown[] }).heraldErrors.length > 0,
          undefined,
          { timeout: 20_000 },
        );
        // The page cannot read the proxy's 502 (another origin, no CORS): reported, and retried.
        expect((await pageState()).errors).toEqual([
          { code: 'endpoint_unverified', kind: 'unavailable', closeCode: null },
        ]);
        const attempts = proxy.state.upgrades;
        await expect
          .poll(() => proxy.state.upgrades, { timeout: 10_000 })
          .toBeGreaterThan(attempts + 1);
        // The edge is reachable again: the same subscription connects and receives.
        proxy.state.down = false;
        await page.locator('#state', { hasText: /^connected$/ }).waitFor({ timeout: 20_000 });
        const result = await herald({ apiKey: web.key, client: 'web' }).notify({
          recipient: to,
          payload: { through: 'proxy' },
          origin: site.origin,
        });
        expect(result.status).toBe(DispatchStatus.sent);
        await page.locator('#events li', { hasText: 'proxy' }).waitFor({ timeout: 10_000 });
        expect((await pageState()).errors).toHaveLength(1);
      } finally {
        await page.evaluate(() =>
          (window as never as { herald?: { disconnect(): void } }).herald?.disconnect(),
        );
        await proxy.close();
      }
    });

    it("docs/sdk.md's browser example, as written, connects and renders an event", async () => {
      const { stack, newKey, herald } = ctx();
      const web = await newKey({ client: 'web', domain: site.origin });
      const to = recipient();
      const code = (await snippet('docs/sdk.md', '## Browser'))
        .replace("from '@herald/sdk'", "from '/herald.js'")
        .replace("'hk_live_…'", JSON.stringify(web.key))
        .replace("'https://herald.example.com'", JSON.stringify(stack.baseUrl))
        .replace("'wss://herald.example.com'", JSON.stringify(stack.wsUrl))
        // Type-only syntax, so the browser runs it; and logout stays for later.
        .replace('<{ title: string; url: string }>', '')
        .replace('herald.disconnect();', 'window.logout = () => herald.disconnect();');
      const [imports, ...body] = code.split('\n');
      const prelude = [
        "const indicator = document.getElementById('state');",
        "const notifications = document.getElementById('events');",
        "const render = (payload) => Object.assign(document.createElement('li'), { textContent: JSON.stringify(payload) });",
        `const currentUser = { uuid: ${JSON.stringify(to)} };`,
      ].join('\n');
      await page.goto(`${site.origin}/`);
      await page.addScriptTag({
        type: 'module',
        content: `${imports}\n${prelude}\n${body.join('\n')}`,
      });
      await page.locator('#state', { hasText: /^connected$/ }).waitFor({ timeout: 20_000 });
      const sender = herald({ apiKey: web.key, client: 'web' });
      const result = await sender.notify({
        recipient: to,
        payload: { title: 'From the docs', url: '/x' },
        origin: site.origin,
      });
      expect(result.status).toBe(DispatchStatus.sent);
      await page.locator('#events li', { hasText: 'From the docs' }).waitFor({ timeout: 20_000 });
      await page.evaluate(() => (window as never as { logout(): void }).logout());
      await page.locator('#state', { hasText: /^disconnected$/ }).waitFor({ timeout: 20_000 });
    });

    it('the built browser bundle receives an event dispatched over HTTP, shows connected, then disconnected when the edge stops', async () => {
      const { stack, newKey, herald } = ctx();
      // A web key bound to the page's origin: the browser sends that Origin on the socket.
      const web = await newKey({ client: 'web', domain: site.origin });
      const to = recipient();
      await page.goto(`${site.origin}/`);
      await page.evaluate(
        (cfg) => (window as never as { startHerald(c: typeof cfg): void }).startHerald(cfg),
        {
          apiKey: web.key,
          wsUrl: stack.wsUrl,
          recipient: to,
        },
      );
      await page.locator('#state', { hasText: 'connected' }).waitFor({ timeout: 15_000 });

      const sender = herald({ apiKey: web.key, client: 'web' });
      const result = await sender.notify({
        recipient: to,
        payload: { hello: 'browser', n: [1, 2] },
        origin: site.origin,
      });
      expect(result.status).toBe(DispatchStatus.sent);
      const item = page.locator('#events li').first();
      await item.waitFor({ timeout: 10_000 });
      expect(JSON.parse((await item.textContent()) ?? '')).toEqual({
        id: result.id,
        payload: { hello: 'browser', n: [1, 2] },
      });

      await stack.stopService('socket-edge');
      try {
        await page.locator('#state', { hasText: 'disconnected' }).waitFor({ timeout: 15_000 });
        expect(
          await page.evaluate(() => (window as never as { heraldLog: string[] }).heraldLog),
        ).toEqual(['connected', 'disconnected']);
      } finally {
        await stack.startService('socket-edge');
      }
      // And it comes back by itself once the edge is up again.
      await page.waitForFunction(
        () => (window as never as { heraldLog: string[] }).heraldLog.length === 3,
        undefined,
        {
          timeout: 15_000,
        },
      );
      expect(
        await page.evaluate(() => (window as never as { heraldLog: string[] }).heraldLog),
      ).toEqual(['connected', 'disconnected', 'connected']);
      await page.evaluate(() =>
        (window as never as { herald: { disconnect(): void } }).herald.disconnect(),
      );
    });
  });
}
