import { performance } from 'node:perf_hooks';
import { type FigureResult, RowCollector, ratioCheckAtMost } from '../report/results.js';
import type { BenchContext } from './context.js';
import { WebhookBacklog } from './webhook-backlog.js';
import { createEndpoint } from './webhook-endpoint.js';
import { PUBLISH_PATH, PublishCost, pairMetrics } from './webhook-publish-cost.js';
import { SUBJECTS, type WebhookOut, type WebhookSide } from './webhook-side.js';
import { WebhookTracker } from './webhook-tracker.js';

/**
 * Issue 39's bound on what one endpoint of every type may add to online publish CPU per event:
 * the publish path's CPU over figure 2's window (first request to last frame), on ÷ off. The
 * sender's own cost is reported beside it (per webhook, and all of Herald until it settled).
 */
const COST_TARGET = 1.1;

/**
 * Figure 7: delivery-status webhooks (issue 39). An account of its own gets one endpoint, every
 * type, at the bench's HTTPS receiver (env/webhook-receiver.ts); each run measures the sender's
 * throughput from a backlog and its lag at a steady rate below it (webhook-backlog.ts), then what
 * the webhooks cost `POST /notify` against an account without an endpoint, side by side
 * (webhook-publish-cost.ts).
 */
export async function webhooks(ctx: BenchContext): Promise<FigureResult> {
  const started = performance.now();
  const receiver = ctx.webhookReceiver;
  if (!receiver) throw new Error('figure 7 needs the webhook receiver the runner starts with it');
  const { config } = ctx;
  const tenant = await ctx.stack.createTenant();
  const endpoint = await createEndpoint(ctx.nc, tenant.account, receiver.url);
  receiver.addSecret(endpoint.secret);
  const tracker = new WebhookTracker();
  receiver.onArrival = tracker.hit;
  const side: WebhookSide = {
    stack: { ...ctx.stack, account: tenant.account, apiKey: tenant.apiKey },
    endpoint: endpoint.id,
    tracker,
  };
  const out: WebhookOut = { rows: new RowCollector('7'), notes: [] };
  const backlog = new WebhookBacklog(ctx, side, out);
  const cost = new PublishCost(ctx, side, out);
  try {
    await cost.setup();
    for (let run = 0; run < config.runs; run++) {
      ctx.checkDeadline();
      await backlog.run(run);
      const line = await cost.run(run);
      ctx.log(`figure 7: run ${run + 1}/${config.runs}: ${line.join(', ')}`);
    }
  } finally {
    receiver.onArrival = () => {};
    await cost.close();
  }
  const { rows, notes } = out;
  if (receiver.refused > 0)
    notes.push(
      `The receiver refused ${receiver.refused} messages (400), the first for ${receiver.firstRefusal}.`,
    );
  const m = pairMetrics(config.recipients[0] ?? 1);
  const publish = rows.ratio(
    `online publish CPU per event, the publish path (${PUBLISH_PATH.join(', ')}), first request to last frame: webhooks on ÷ off`,
    m.publishWindow,
    SUBJECTS.on,
    SUBJECTS.off,
  );
  const cpu = rows.ratio(
    'all of Herald per event until the pipeline settled (the webhooks sent): webhooks on ÷ off',
    m.cpu,
    SUBJECTS.on,
    SUBJECTS.off,
  );
  const path = rows.ratio(
    `the publish path (${PUBLISH_PATH.join(', ')}) per event until the pipeline settled: webhooks on ÷ off`,
    m.publishPath,
    SUBJECTS.on,
    SUBJECTS.off,
  );
  const rate = rows.ratio(
    'online publish deliveries/s: webhooks on ÷ off',
    m.rate,
    SUBJECTS.on,
    SUBJECTS.off,
  );
  return {
    id: '7',
    title: 'Delivery-status webhooks',
    rows: rows.rows(),
    checks: [
      ratioCheckAtMost(
        '7',
        `online publish CPU per event (the publish path, first request to last frame), one endpoint of every type: ≤ ${COST_TARGET}× without`,
        publish,
        COST_TARGET,
      ),
    ],
    ratios: [publish, path, cpu, rate],
    notes,
    elapsedMs: performance.now() - started,
  };
}
