import { post } from '@herald/testkit';
import type { ComposeStack } from '@herald/testkit/compose';
import { WebhookReceiver } from '../deploy/webhook-receiver.js';
import { metricsText, sumSeries } from './cluster-ops.js';
import { accepted, type ClusterLoad, type Dispatch, type LoadTarget } from './load.js';
import { deliveredHook } from './report.js';

// The cluster test's webhook check: the account's one endpoint at the HTTPS receiver the test runs
// on the Docker host (test/deploy/webhook-receiver.ts, its own CA, which status trusts through
// scripts/lib/stack-test.sh), and, at the end, every accepted event's event.delivered there.

/** Missing events whose status the failure message looks up (one POST /events/status). */
const MISSING_SHOWN = 20;
/** Lookups tried before the failure message gives the last answer instead, and the pause between. */
const LOOKUP_TRIES = 5;
const LOOKUP_PAUSE_MS = 2_000;

/** The receiver, and the demo account's endpoint at it for event.delivered, made with the admin CLI. */
export async function startReceiver(stack: ComposeStack): Promise<WebhookReceiver> {
  const receiver = await WebhookReceiver.start(stack.project);
  const endpoint = await stack.admin<{ secret: string }>(
    'webhook',
    'create',
    '--account',
    stack.demo().accountId,
    '--url',
    receiver.url,
    '--events',
    'event.delivered',
  );
  receiver.secret = endpoint.secret;
  return receiver;
}

/** Accepted dispatches whose event.delivered has not arrived (one without an id never will). */
export const hooksMissing = (load: ClusterLoad, receiver: WebhookReceiver): Dispatch[] =>
  load.dispatches.filter(
    (d) => accepted(d) && (d.id === undefined || !receiver.messages.has(deliveredHook(d))),
  );

/** Waits, polling, until every accepted event's webhook arrived or `limitMs` passed; the ms waited. */
export async function waitForHooks(
  load: ClusterLoad,
  receiver: WebhookReceiver,
  limitMs: number,
): Promise<number> {
  const started = Date.now();
  while (hooksMissing(load, receiver).length > 0 && Date.now() - started < limitMs)
    await new Promise<void>((r) => setTimeout(r, 500));
  return Date.now() - started;
}

/**
 * The first missing events, each with what `POST /events/status` answers for it (through the load
 * balancer, with the load's key), for the failure message.
 */
export async function describeMissing(target: LoadTarget, missing: Dispatch[]): Promise<string[]> {
  const shown = missing.slice(0, MISSING_SHOWN);
  const ids = shown.flatMap((d) => (d.id === undefined ? [] : [d.id]));
  const states = new Map<string, string>();
  if (ids.length > 0) {
    // A 503 (the status service did not answer within STATUS_TIMEOUT_MS) is tried again: the
    // first run with this check got only that, for its one lookup after the faults.
    let res: { status: number; text: string; body: unknown } = { status: 0, text: '', body: null };
    let tries = 0;
    while (tries < LOOKUP_TRIES && res.status !== 200) {
      if (tries++ > 0) await new Promise<void>((r) => setTimeout(r, LOOKUP_PAUSE_MS));
      res = await post(
        target.baseUrl,
        target.ca,
        { api_key: target.apiKey, ids },
        { path: '/events/status' },
      ).catch((err: unknown) => ({ status: 0, text: String(err), body: undefined }));
    }
    const events = (res.body as { events?: Array<Record<string, unknown>> } | undefined)?.events;
    if (res.status !== 200 || !events)
      for (const id of ids)
        states.set(id, `status lookup answered ${res.status} (${tries} tries): ${res.text}`);
    else
      for (const e of events) {
        const { id, ...rest } = e;
        states.set(String(id), JSON.stringify(rest));
      }
  }
  return shown.map(
    (d) =>
      `${d.phase}: ${d.id ?? `seq ${d.seq}, no id in the answer`} (${d.status}) ${d.id ? (states.get(d.id) ?? 'not in the lookup') : ''}`,
  );
}

/** The status service's webhook counters, read by metric-name prefix on its ops listener. */
export async function webhookMetrics(
  stack: ComposeStack,
  service: string,
): Promise<Record<string, number>> {
  const text = await metricsText(stack, service);
  const attempts = sumSeries(text, 'herald_webhook_attempts_total');
  const success = sumSeries(text, 'herald_webhook_attempts_total{result="success"');
  return {
    enqueued: sumSeries(text, 'herald_webhook_enqueued_total'),
    dropped: sumSeries(text, 'herald_webhook_dropped_total'),
    attempts2xx: success,
    attemptsOther: attempts - success,
    messagesFailed: sumSeries(text, 'herald_webhook_messages_failed_total'),
    queueDepth: sumSeries(text, 'herald_webhook_queue_depth'),
  };
}
