import type { HeraldStack } from '../env/herald-stack.js';
import type { RowCollector } from '../report/results.js';
import type { BenchContext } from './context.js';
import { settle } from './webhook-endpoint.js';
import type { WebhookTracker } from './webhook-tracker.js';

/** Figure 7's subjects, as its rows name them. */
export const SUBJECTS = {
  sender: 'Herald → HTTPS receiver, one endpoint (every type)',
  off: 'Herald POST /notify, webhooks off (no endpoint)',
  on: 'Herald POST /notify, webhooks on (one endpoint, every type)',
} as const;

/** Longest a window waits for the sender to answer every message its events caused, ms. */
export const WEBHOOK_SETTLE_MS = 120_000;

/** The account whose webhooks are on: its key, its one endpoint, and what reaches the receiver. */
export interface WebhookSide {
  /** The stack as that account's key sees it: every notify body of the side carries its key. */
  stack: HeraldStack;
  /** Its endpoint, subscribed to every type. */
  endpoint: string;
  tracker: WebhookTracker;
}

/** Where figure 7's measurements go. */
export interface WebhookOut {
  rows: RowCollector;
  notes: string[];
}

/**
 * Waits for the pipeline to settle after a window (webhook-endpoint.ts `settle`): with `endpoint`,
 * until its messages are all answered; notes the window's name when it did not settle in time.
 */
export async function settleWindow(
  ctx: BenchContext,
  side: WebhookSide,
  endpoint: string | undefined,
  notes: string[],
  what: string,
): Promise<void> {
  const settled = await settle(ctx.nc, ctx.jsm, {
    ...(endpoint === undefined ? {} : { endpoint }),
    arrivals: () => side.tracker.arrivals,
    timeoutMs: WEBHOOK_SETTLE_MS,
  });
  if (!settled)
    notes.push(
      `${what}: the status pipeline had not settled ${WEBHOOK_SETTLE_MS / 1000} s after the window (records unwritten or messages unanswered)`,
    );
}
