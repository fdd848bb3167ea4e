import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Stack } from '@herald/testkit';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildDashboard, openChromium, startDashboardStack } from './support.js';
import { furnishAccount, PAGES, visit } from './tour.js';

const DIST = mkdtempSync(join(tmpdir(), 'herald-dashboard-narrow-'));
const UI_TIMEOUT = 180_000;

/**
 * Every page of the dashboard at 375 px (a phone) and 1366 px (a laptop), issue 45: nothing wider
 * than the screen, so no page scrolls sideways.
 */
describe('every dashboard page at 375 and 1366 px, in headless Chromium', () => {
  let stack: Stack;
  let browser: Browser;
  let page: Page;
  let origin: string;

  beforeAll(async () => {
    await buildDashboard(DIST);
    ({ stack, origin } = await startDashboardStack(DIST, [
      'auth',
      'ingress-api',
      'socket-edge',
      'status',
    ]));
    ({ browser, page } = await openChromium(900));
    page.on('dialog', (d) => void d.accept());
    await furnishAccount(page, stack, origin);
  }, UI_TIMEOUT);

  afterAll(async () => {
    await browser?.close();
    await stack?.stop();
    rmSync(DIST, { recursive: true, force: true });
  });

  for (const width of [375, 1366]) {
    it(
      `no page is wider than ${width} px`,
      async () => {
        const wide: string[] = [];
        for (const [hash, heading] of PAGES) {
          await visit(page, origin, hash, heading, width);
          const scroll = await page.evaluate(() => document.documentElement.scrollWidth);
          if (scroll > width) {
            // The outermost elements past the edge, to say what is too wide.
            const culprits = await page.evaluate((w) => {
              const out: string[] = [];
              for (const el of document.querySelectorAll('main *')) {
                const r = el.getBoundingClientRect();
                const parent = el.parentElement?.getBoundingClientRect();
                if (r.right > w + 1 && parent && parent.right <= w + 1) {
                  out.push(`${el.tagName.toLowerCase()}.${el.className}`);
                }
              }
              return out.slice(0, 3).join(', ');
            }, width);
            wide.push(`${hash}: ${scroll} px (${culprits})`);
          }
        }
        expect(wide).toEqual([]);
      },
      UI_TIMEOUT,
    );
  }
});
