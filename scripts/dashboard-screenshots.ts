/**
 * Screenshots of every dashboard page, at 1366 px (a laptop) and 375 px (a phone), into
 * docs/screenshots/, and the delivery page at 1366 px as docs/dashboard.png (the one the README
 * shows). Run `make screenshots` (or `npx tsx --conditions=herald-source
 * scripts/dashboard-screenshots.ts`) after changing a page: it builds the dashboard, starts its
 * own stack (auth, ingress, the edge, status; the test kit's private nats-server and Postgres),
 * makes an account with something on every page (clients/dashboard/test/tour.ts) and stops
 * everything when done. Needs Debian's chromium, as the browser tests do.
 */
import { copyFileSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  buildDashboard,
  openChromium,
  startDashboardStack,
} from '../clients/dashboard/test/support.js';
import { furnishAccount, PAGES, visit } from '../clients/dashboard/test/tour.js';
import { build as buildSdk } from '../clients/sdk/scripts/build.js';

const REPO = join(dirname(fileURLToPath(import.meta.url)), '..');
const OUT = join(REPO, 'docs', 'screenshots');
const WIDTHS = [1366, 375] as const;

const dist = mkdtempSync(join(tmpdir(), 'herald-dashboard-shots-'));
mkdirSync(OUT, { recursive: true });
// The dashboard imports @herald/sdk as shipped (its dist/), which a fresh clone has not built yet.
await buildSdk({ ifStale: true });
await buildDashboard(dist);
const { stack, origin } = await startDashboardStack(dist, [
  'auth',
  'ingress-api',
  'socket-edge',
  'status',
]);
const { browser, page } = await openChromium(900);
try {
  page.on('dialog', (d) => void d.accept());
  for (const width of WIDTHS) {
    await page.setViewportSize({ width, height: 900 });
    await page.goto(`${origin}/`);
    await page.getByRole('heading', { name: 'Log in' }).waitFor();
    await page.screenshot({ path: join(OUT, `dashboard-login-${width}.png`), fullPage: true });
  }
  await furnishAccount(page, stack, origin);
  for (const [hash, heading] of PAGES) {
    for (const width of WIDTHS) {
      await visit(page, origin, hash, heading, width);
      const file = join(OUT, `dashboard-${hash}-${width}.png`);
      await page.screenshot({ path: file, fullPage: true });
      process.stdout.write(`${file}\n`);
    }
  }
  copyFileSync(join(OUT, 'dashboard-delivery-1366.png'), join(REPO, 'docs', 'dashboard.png'));
} finally {
  await browser.close();
  await stack.stop();
  rmSync(dist, { recursive: true, force: true });
}
