import { randomUUID } from 'node:crypto';
import type { PushService } from '@herald/testkit';
import type { HeraldStack } from '../env/herald-stack.js';
import { closedLoop } from '../load/pace.js';
import type { RowCollector } from '../report/results.js';
import type { BenchContext } from './context.js';
import { configureVapid, subscriptionBody } from './push-wire.js';
import { settle } from './webhook-endpoint.js';

/** Figure 8's subjects, as its rows name them. */
export const SUBJECTS = {
  sender: 'Herald → HTTPS push service, one Web Push subscription per recipient',
  off: 'Herald POST /notify, a key of an account without push',
  on: "Herald POST /notify, a key not opted in to push, its account's push configured (VAPID key, a subscription per recipient)",
} as const;

/** Longest the subscriptions' registration may take, ms (a bound on the loop, never reached). */
const REGISTER_MS = 600_000;

/** The two accounts whose push is configured (a VAPID key each), and where their pushes arrive. */
export interface PushSide {
  /** The stack as the `--push-after-ms` key of one sees it (the backlog's events). */
  pushKey: HeraldStack;
  /** The stack as the other's key, not opted in to push, sees it (the A/B's "on" side). */
  plainKey: HeraldStack;
  service: PushService;
}

/** Where figure 8's measurements go. */
export interface PushOut {
  rows: RowCollector;
  notes: string[];
}

/**
 * Two accounts of their own, each with a VAPID key pair (over the push API, as `push configure
 * --vapid generate` makes it): one whose key is opted in with `--push-after-ms`
 * BENCH_PUSH_AFTER_MS, one whose key is not (an account has one Test key, and the A/B compares
 * Test keys alike).
 */
export async function pushSide(ctx: BenchContext, service: PushService): Promise<PushSide> {
  const [opted, plain] = await Promise.all([
    ctx.stack.createTenant({ pushAfterMs: ctx.config.pushAfterMs }),
    ctx.stack.createTenant(),
  ]);
  await Promise.all([configureVapid(ctx.nc, opted.account), configureVapid(ctx.nc, plain.account)]);
  return {
    pushKey: { ...ctx.stack, account: opted.account, apiKey: opted.apiKey },
    plainKey: { ...ctx.stack, account: plain.account, apiKey: plain.apiKey },
    service,
  };
}

/** `count` new recipients of `stack`'s key, each with one Web Push subscription at the service. */
export async function subscribedRecipients(
  ctx: BenchContext,
  stack: HeraldStack,
  service: PushService,
  count: number,
): Promise<string[]> {
  const recipients = Array.from({ length: count }, () => randomUUID());
  const loop = await closedLoop(
    ctx.config.concurrency,
    { durationMs: REGISTER_MS, maxCount: count },
    async (i) => {
      const body = subscriptionBody(stack.apiKey, recipients[i] as string, service.subscribe());
      const r = await ctx.http.ingress.post('/push/subscriptions', body);
      if (r.status !== 201) throw new Error(`HTTP ${r.status}: ${r.text.slice(0, 200)}`);
    },
  );
  if (loop.failed > 0 || loop.completed < count)
    throw new Error(
      `figure 8: ${loop.completed - loop.failed} of ${count} subscriptions registered: ${loop.firstError}`,
    );
  return recipients;
}

/**
 * Waits for the status pipeline to settle after a window (webhook-endpoint.ts `settle`: every
 * status record written, then no push arriving for a while); notes the window when it did not
 * within BENCH_PUSH_SETTLE_MS.
 */
export async function settlePush(
  ctx: BenchContext,
  side: PushSide,
  notes: string[],
  what: string,
): Promise<void> {
  const settled = await settle(ctx.nc, ctx.jsm, {
    arrivals: () => side.service.arrivals().length,
    timeoutMs: ctx.config.pushSettleMs,
  });
  if (!settled)
    notes.push(
      `${what}: the status pipeline had not settled ${ctx.config.pushSettleMs / 1000} s after the window (BENCH_PUSH_SETTLE_MS)`,
    );
}
