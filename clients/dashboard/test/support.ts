import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import type { Stack } from '@herald/testkit';

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
