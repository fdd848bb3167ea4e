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
    timeoutMs: ctx.config.webhookSettleMs,
  });
  if (!settled)
    notes.push(
      `${what}: the status pipeline had not settled ${ctx.config.webhookSettleMs / 1000} s after the window (BENCH_WEBHOOK_SETTLE_MS: records unwritten or messages unanswered)`,
    );
}
