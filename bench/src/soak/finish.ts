import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { SoakConfig } from './config.js';
import type { DeviceClient } from './device-client.js';
import type { DeliveryLedger } from './ledger.js';
import {
  type NatsHoldings,
  natsHoldings,
  recipientSubscriptions,
  settled,
  socketCountKeys,
  subscriptionSubjects,
} from './leftovers.js';
import { pushTally } from './push-tally.js';
import { type Restart, type Sample, samplesCsv } from './samples.js';
import type { SoakStack } from './soak-stack.js';
import { WEBHOOK_PATH } from './soak-stack.js';
import { failures, processRows, type SoakReport, summaryMarkdown } from './summary.js';
import { memoryPlotSvg } from './svg.js';

/** No new arrival for this long during the end's wait, and the waiting devices reconnect. */
const RECONNECT_AFTER_MS = 30_000;
/**
 * How long what a closed socket owned may take to go: the edge deletes its count key at once,
 * and a crashed edge's expire with the bucket's TTL (CONNECTION_COUNT_TTL_MS, 30 s); consumers
 * and subscriptions go as the edge unsubscribes.
 */
const SETTLE_MS = 60_000;

export interface SoakResult {
  dir: string;
  passed: boolean;
  markdown: string;
}

export interface FinishInput {
  cfg: SoakConfig;
  startedAt: string;
  t0: number;
  env: SoakStack;
  ledger: DeliveryLedger;
  sampler: { stop(): Promise<Sample[]> };
  baseline: NatsHoldings;
  restarts: Restart[];
  devices: { held: DeviceClient[]; away: DeviceClient[] };
  /** The push key's subscriptions: subscription id (its endpoint's last segment) → recipient. */
  pushSubscriptions: ReadonlyMap<string, string>;
  /** Recipients the churn's sockets connected as. */
  churned: ReadonlySet<string>;
  notes: string[];
}

const log = (msg: string) => process.stderr.write(`soak: ${msg}\n`);

/**
 * Waits (bounded by SOAK_DRAIN_TIMEOUT_S) until every accepted event has reached its recipient,
 * with every device now held open (the away ones get their queue on connect); a device whose
 * events stop coming is reconnected, as an app would. Resolves with how long it took.
 */
async function drain(i: FinishInput): Promise<number> {
  const all = [...i.devices.held, ...i.devices.away];
  for (const d of all) d.hold();
  const byRecipient = new Map(all.map((d) => [d.opts.recipient, d]));
  const start = Date.now();
  let best = Number.POSITIVE_INFINITY;
  let progressAt = start;
  for (;;) {
    const missing = i.ledger.missing();
    if (missing.length === 0 || Date.now() - start > i.cfg.drainTimeoutMs) break;
    if (missing.length < best) {
      best = missing.length;
      progressAt = Date.now();
    } else if (Date.now() - progressAt > RECONNECT_AFTER_MS) {
      const waiting = new Set(missing.map((m) => m.recipient));
      log(
        `${missing.length} event(s) still missing for ${waiting.size} device(s): reconnecting them`,
      );
      await Promise.all([...waiting].map((r) => byRecipient.get(r)?.reconnect()));
      progressAt = Date.now();
    }
    await new Promise((r) => setTimeout(r, 500));
  }
  return Date.now() - start;
}

/** The webhook messages the receiver got, by type. */
function webhookTally(i: FinishInput): string {
  const byType = new Map<string, number>();
  for (const a of i.env.receiver.at(WEBHOOK_PATH)) {
    const type = (JSON.parse(a.body) as { type?: string }).type ?? '?';
    byType.set(type, (byType.get(type) ?? 0) + 1);
  }
  const list = [...byType].map(([t, n]) => `${n} ${t}`).join(', ');
  return `Webhooks (the main account's endpoint, every type): ${list || 'none'}.`;
}

/** The end of the run: the delivery wait, the leftovers, the results folder. */
export async function finish(i: FinishInput): Promise<SoakResult> {
  const drainMs = await drain(i);
  log(`delivery wait over after ${(drainMs / 1000).toFixed(1)} s`);
  const samples = await i.sampler.stop();
  const all = [...i.devices.held, ...i.devices.away];
  await Promise.all(all.map((d) => d.release()));
  const recipients = new Set([...all.map((d) => d.opts.recipient), ...i.churned]);
  const { nc } = i.env;
  const holdings = () => natsHoldings(i.env.monitorUrl);
  const leftovers = [
    await settled(
      'socket-count keys in KV herald_connections (every socket closed)',
      async () => (await socketCountKeys(nc)).length,
      0,
      SETTLE_MS,
    ),
    // Each recipient's durable queue consumer stays until retention reaps it (by design); any
    // other one (a socket's, a churned recipient's) must be gone.
    await settled(
      'JetStream consumers (idle baseline + one queue consumer per recipient sent to)',
      async () => (await holdings()).consumers,
      i.baseline.consumers + all.length,
      SETTLE_MS,
    ),
    // A recipient's subscriptions (its live subject, its queue notices, its inbox count) belong
    // to its sockets: with every socket closed, none may be left on any connection.
    await settled(
      "NATS subscriptions naming a recipient (every recipient's sockets closed)",
      async () =>
        (await recipientSubscriptions(await subscriptionSubjects(i.env.monitorUrl), recipients))
          .length,
      0,
      SETTLE_MS,
    ),
  ];
  const end = await holdings();
  const opens = all.reduce((a, d) => a + d.opens, 0);
  const inboxAnswers = all.reduce((a, d) => a + d.inboxAnswers, 0);
  const inboxErrors = all.reduce((a, d) => a + d.inboxErrors, 0);
  const report: SoakReport = {
    startedAt: i.startedAt,
    minutes: i.cfg.minutes,
    drainMs,
    warmupMs: i.cfg.warmupMs,
    maxSlopeMbPerH: i.cfg.maxSlopeMbPerH,
    maxHeapSlopeMbPerH: i.cfg.maxHeapSlopeMbPerH,
    slopeMinWindowMs: i.cfg.slopeMinWindowMs,
    rows: processRows(samples, {
      warmupMs: i.cfg.warmupMs,
      maxMbPerHour: i.cfg.maxSlopeMbPerH,
      maxHeapMbPerHour: i.cfg.maxHeapSlopeMbPerH,
      minWindowMs: i.cfg.slopeMinWindowMs,
    }),
    ledger: i.ledger.counts(),
    misrouted: i.ledger.misrouted().length,
    push: pushTally(i.env.pushService.arrivals(), i.pushSubscriptions, i.ledger),
    leftovers,
    restarts: i.restarts,
    notes: [
      ...i.notes,
      `NATS subscriptions in all: ${i.baseline.subscriptions} idle before the load, ${end.subscriptions} at the end (JetStream's internal ones per stream and consumer, and the services' own, included; not judged).`,
      `Device connects: ${opens}; inbox answers ${inboxAnswers}, inbox errors ${inboxErrors}.`,
      webhookTally(i),
      `Samples: ${samples.length} every ${i.cfg.sampleMs / 1000} s (samples.csv); plot: memory.svg.`,
    ],
  };
  const dir = join(i.cfg.resultsDir, `soak-${i.startedAt.replace(/[:.]/g, '-')}`);
  mkdirSync(dir, { recursive: true });
  const markdown = summaryMarkdown(report);
  writeFileSync(join(dir, 'samples.csv'), samplesCsv(samples));
  writeFileSync(
    join(dir, 'memory.svg'),
    memoryPlotSvg(samples, i.restarts, `Herald soak ${i.startedAt}: RSS per process`),
  );
  writeFileSync(join(dir, 'summary.md'), markdown);
  const missing = i.ledger.missing();
  if (missing.length > 0)
    writeFileSync(join(dir, 'missing.json'), JSON.stringify(missing, null, 2));
  // What holds every subscription, per connection, for the record (and a leftover's diagnosis).
  const connz = await fetch(`${i.env.monitorUrl}/connz?subs=1&limit=100000`).then((r) => r.text());
  writeFileSync(join(dir, 'connz.json'), connz);
  return { dir, passed: failures(report).length === 0, markdown };
}
