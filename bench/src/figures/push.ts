import { performance } from 'node:perf_hooks';
import { type FigureResult, RowCollector, ratioCheckAtMost } from '../report/results.js';
import type { BenchContext } from './context.js';
import { PushBacklog } from './push-backlog.js';
import { abMetrics, PushPublishCost } from './push-publish-cost.js';
import { type PushOut, pushSide, SUBJECTS, subscribedRecipients } from './push-side.js';
import { PUBLISH_PATH } from './webhook-publish-cost.js';

/**
 * Issue 40's "unchanged beyond noise": `POST /notify` CPU per event on the publish path, first
 * request to last frame, for a key not opted in to push of an account whose push is configured,
 * over a key of an account without push, in the same run. Figure 7's bound for its own on/off pair.
 */
const COST_TARGET = 1.1;

/**
 * Figure 8: the push fallback (issue 40). The bench's HTTPS Web Push service (lib/testkit's,
 * decrypting and checking every push) stands in for the browsers' push services; two accounts of
 * its own get a VAPID key each, one a `--push-after-ms` key, one a key without push. It measures
 * the cost to `POST /notify` of the key without push against an account without push, side by
 * side (push-publish-cost.ts), then the sender's pushes/s from a backlog of offline events
 * (push-backlog.ts).
 */
export async function push(ctx: BenchContext): Promise<FigureResult> {
  const started = performance.now();
  const service = ctx.pushService;
  if (!service) throw new Error('figure 8 needs the push service the runner starts with it');
  const { config } = ctx;
  const side = await pushSide(ctx, service);
  ctx.log(`figure 8: registering ${config.pushBacklog} Web Push subscriptions for the backlog`);
  const recipients = await subscribedRecipients(ctx, side.pushKey, service, config.pushBacklog);
  const out: PushOut = { rows: new RowCollector('8'), notes: [] };
  const backlog = new PushBacklog(ctx, side, out, recipients);
  const cost = new PushPublishCost(ctx, side, out);
  try {
    // Every A/B pair first, then every backlog: a backlog's tail (the sender's results, Postgres
    // cleaning up after them) would otherwise fall in whichever side of the next pair went first.
    await cost.setup();
    for (let run = 0; run < config.runs; run++) {
      ctx.checkDeadline();
      ctx.log(`figure 8: A/B run ${run + 1}/${config.runs}: ${await cost.run(run)}`);
    }
    await cost.close();
    for (let run = 0; run < config.runs; run++) {
      ctx.checkDeadline();
      ctx.log(`figure 8: backlog run ${run + 1}/${config.runs}: ${await backlog.run(run)}`);
    }
  } finally {
    await cost.close();
  }
  const { rows, notes } = out;
  const m = abMetrics(config.recipients[0] ?? 1);
  const ratio = (label: string, metric: string) =>
    rows.ratio(
      `${label}: push configured, key not opted in ÷ no push`,
      metric,
      SUBJECTS.on,
      SUBJECTS.off,
    );
  const publish = ratio(
    `POST /notify CPU per event, the publish path (${PUBLISH_PATH.join(', ')}), first request to last frame`,
    m.publishWindow,
  );
  const path = ratio(
    `the publish path (${PUBLISH_PATH.join(', ')}) per event until the pipeline settled`,
    m.publishPath,
  );
  const cpu = ratio('all of Herald per event until the pipeline settled', m.cpu);
  const rate = ratio('online publish deliveries/s', m.rate);
  return {
    id: '8',
    title: 'Push fallback',
    rows: rows.rows(),
    checks: [
      ratioCheckAtMost(
        '8',
        `POST /notify CPU per event (the publish path, first request to last frame) for a key without push, its account's push configured: ≤ ${COST_TARGET}× an account without push`,
        publish,
        COST_TARGET,
      ),
    ],
    ratios: [publish, path, cpu, rate],
    notes,
    elapsedMs: performance.now() - started,
  };
}
