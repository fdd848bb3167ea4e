import { readFileSync } from 'node:fs';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DispatchStatus } from '@herald/sdk';
import { type Browser, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeCerts } from '../../../../test/harness/certs.js';
import { recipient, type SdkStack } from './context.js';

const HERE = dirname(fileURLToPath(import.meta.url));
const BUNDLE = join(HERE, '..', '..', 'dist', 'browser.js');

/** A tiny HTTPS origin serving the test page and the built browser bundle. */
async function servePage(): Promise<{ origin: string; close: () => Promise<void> }> {
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

export function browserTests(ctx: () => SdkStack): void {
  describe('headless Chromium', () => {
    let browser: Browser;
    let page: Page;
    let site: Awaited<ReturnType<typeof servePage>>;

    beforeAll(async () => {
      site = await servePage();
      browser = await chromium.launch({
        executablePath: '/usr/bin/chromium',
        args: [
          '--no-sandbox',
          '--disable-gpu',
          '--disable-quic',
          '--no-first-run',
          '--disable-background-networking',
          '--disable-component-update',
          '--disable-sync',
          // The page and the stack use throwaway CAs the browser does not know.
          '--ignore-certificate-errors',
        ],
      });
      page = await browser.newPage();
    });

    afterAll(async () => {
      await browser?.close();
      await site?.close();
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
