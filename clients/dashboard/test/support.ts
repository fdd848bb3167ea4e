import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { type ServiceName, type Stack, type StackOptions, startStack } from '@herald/testkit';
import { CHROMIUM_ARGS, CHROMIUM_PATH } from '@herald/testkit/browser';
import { type Browser, chromium, type Page } from 'playwright-core';

const run = promisify(execFile);
const REPO = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');

/** The plans Herald ships (config/plans.json): the pages, and their screenshots, show them. */
export const SHIPPED_PLANS = JSON.parse(
  readFileSync(join(REPO, 'config', 'plans.json'), 'utf8'),
) as {
  plans: Array<{ id: string; name: string }>;
  test_key_limits: Record<
    'connections' | 'dispatch_rate' | 'dispatch_burst' | 'queue_per_recipient',
    number
  >;
};

/** Polls an assertion until it holds (the page refreshes figures when asked, the pipeline lags). */
export async function until(check: () => Promise<void>, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      await check();
      return;
    } catch (err) {
      if (Date.now() > deadline) throw err;
      await new Promise((r) => setTimeout(r, 250));
    }
  }
}

/** `POST /notify` with curl, as a customer's backend would: the answer's JSON. */
export async function notifyWithCurl(
  stack: Stack,
  event: { recipient: string; payload: unknown; api_key: string },
): Promise<{ status: string; id: string }> {
  const { stdout } = await run('curl', [
    '-sS',
    '--cacert',
    stack.caFile,
    '-H',
    'Content-Type: application/json',
    '-d',
    JSON.stringify({ ...event, client: 'mobile' }),
    `${stack.baseUrl}/notify`,
  ]);
  return JSON.parse(stdout) as { status: string; id: string };
}

const APP = join(REPO, 'clients', 'dashboard');

/**
 * Builds the dashboard into `dist`: each browser test file its own folder, since they build at
 * once in several workers and a build empties its folder first.
 */
export async function buildDashboard(dist: string): Promise<void> {
  await run('npx', ['vite', 'build', '--logLevel', 'warn', '--outDir', dist, '--emptyOutDir'], {
    cwd: APP,
  });
}

/**
 * The stack with auth serving the dashboard built in `dist` (`authEnv` added to auth's), on the
 * plans Herald ships, so the pages and their screenshots show them. The debug console and the
 * page's socket need ingress's and the edge's URLs, known only once the stack has its ports:
 * auth reads them at its restart from the same options object.
 */
export async function startDashboardStack(
  dist: string,
  services: ServiceName[],
  authEnv: Record<string, string> = {},
  /** The other services' extra environment (the status service's webhook settings). */
  otherEnv: Partial<Record<Exclude<ServiceName, 'auth'>, Record<string, string>>> = {},
): Promise<{ stack: Stack; origin: string }> {
  const opts = {
    services,
    plans: SHIPPED_PLANS,
    env: { ...otherEnv, auth: { DASHBOARD_DIR: dist, ...authEnv } as Record<string, string> },
  } satisfies StackOptions;
  const stack = await startStack(opts);
  opts.env.auth.DASHBOARD_INGRESS_URL = stack.baseUrl;
  opts.env.auth.DASHBOARD_WS_URL = stack.wsUrl;
  await stack.restart('auth');
  return { stack, origin: `https://127.0.0.1:${stack.ports.auth}` };
}

/** Headless Chromium and one page of 1200 × `height`. */
export async function openChromium(height: number): Promise<{ browser: Browser; page: Page }> {
  const browser = await chromium.launch({
    executablePath: CHROMIUM_PATH,
    headless: true,
    args: [...CHROMIUM_ARGS],
  });
  return { browser, page: await browser.newPage({ viewport: { width: 1200, height } }) };
}

/** Signs a new account up on the dashboard at `origin` (`<prefix>-<time>@test.herald`): its Keys page. */
export async function signUp(page: Page, origin: string, prefix: string): Promise<string> {
  const email = `${prefix}-${Date.now()}@test.herald`;
  await page.goto(`${origin}/`);
  await page.getByRole('button', { name: 'Create an account' }).click();
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password').fill('a long enough passphrase');
  await page.getByRole('button', { name: 'Create an account' }).first().click();
  await page.getByRole('heading', { name: 'API keys' }).waitFor();
  return email;
}

/** The id of the account the page is logged in to (`GET /v1/account`, with its session). */
export async function accountOf(page: Page): Promise<string> {
  return page.evaluate(async () => {
    const r = await fetch('/v1/account', { credentials: 'same-origin' });
    return ((await r.json()) as { id: string }).id;
  });
}
