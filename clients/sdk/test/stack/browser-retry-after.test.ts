import { randomUUID } from 'node:crypto';
import { type Stack, startStack } from '@herald/testkit';
import { CHROMIUM_ARGS, CHROMIUM_PATH } from '@herald/testkit/browser';
import { type Browser, chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { servePage } from './browser.tests.js';

type Hint = { retryAfter: number; at: number };
type SubState = { state: string; at: number };

// A browser cannot read an upgrade's headers, so the edge's Retry-After reaches it in-band, in
// the 4429's close reason: the shipped browser bundle, in Chromium, against a real edge whose
// connect rate admits one socket a second.
describe('headless Chromium and the edge connect rate (4429 too_many_connects, retry_after)', () => {
  let stack: Stack;
  let browser: Browser;
  let site: Awaited<ReturnType<typeof servePage>>;
  beforeAll(async () => {
    [stack, site, browser] = await Promise.all([
      startStack({ env: { 'socket-edge': { CONNECT_RATE_PER_S: '1', CONNECT_BURST: '1' } } }),
      servePage(),
      chromium.launch({ executablePath: CHROMIUM_PATH, args: [...CHROMIUM_ARGS] }),
    ]);
  });
  afterAll(async () => {
    await browser?.close();
    await site?.close();
    await stack?.stop();
  });

  it('reads retry_after from the close reason and waits it out before reconnecting', async () => {
    const { id: account } = await stack.createAccount();
    const web = await stack.createKey({
      account,
      kind: 'test',
      client: 'web',
      domain: site.origin,
    });
    const page = await browser.newPage();
    await page.goto(`${site.origin}/`);
    // Two sockets at once: the burst admits one, the other is refused with the hint.
    await page.evaluate(
      (cfg) => (window as never as { startHerald(c: typeof cfg): void }).startHerald(cfg),
      { apiKey: web.key, wsUrl: stack.wsUrl, recipients: [randomUUID(), randomUUID()] },
    );
    await page.waitForFunction(
      () =>
        (
          window as never as { heraldSubs: Array<{ sub: { connected(): boolean } }> }
        ).heraldSubs.every((s) => s.sub.connected()),
      undefined,
      { timeout: 20_000 },
    );
    const seen = await page.evaluate(() => {
      const w = window as never as {
        heraldErrors: unknown[];
        heraldHints: Hint[];
        heraldSubs: Array<{ states: SubState[] }>;
        herald: { disconnect(): void };
      };
      w.herald.disconnect();
      return {
        errors: w.heraldErrors,
        hints: w.heraldHints,
        states: w.heraldSubs.map((s) => s.states),
      };
    });
    await page.close();
    expect(seen.errors).toEqual([{ code: 'too_many_connects', kind: 'refused', closeCode: 4429 }]);
    expect(seen.hints.map((h) => h.retryAfter)).toEqual([1]);
    // The refused one connected (a new socket, then the accept delay) no sooner than the hint.
    const refusedAt = seen.hints[0]?.at ?? Number.POSITIVE_INFINITY;
    const connectedAt = seen.states.map((s) => s.find((x) => x.state === 'connected')?.at ?? 0);
    expect(connectedAt.filter((at) => at >= refusedAt + 1000)).toHaveLength(1);
    const metrics = await fetch(`http://127.0.0.1:${stack.opsPorts['socket-edge']}/metrics`);
    expect(await metrics.text()).toContain(
      'herald_socket_rejections_total{code="too_many_connects",service="socket-edge"} 1\n',
    );
  });
});
