import { performance } from 'node:perf_hooks';
import {
  errorOfReply,
  STATUS_CONSUMER,
  STATUS_STREAM,
  WEBHOOK_API_SUBJECT,
  WebhookEndpointReply,
  type WebhookRequest,
  WebhookSecretReply,
} from '@herald/proto';
import type { JetStreamManager, NatsConnection } from 'nats';
import type { z } from 'zod';

/** How long one endpoint operation may take to be answered, ms. */
const REQUEST_TIMEOUT_MS = 10_000;
/** How often the status consumer is polled while a figure waits for it, ms. */
const POLL_MS = 50;
/** No message for this long, and the sender is asked whether anything is still waiting, ms. */
const QUIET_MS = 200;

/**
 * One endpoint operation over the contract's request subject, as auth sends it for the admin CLI
 * and the account API (the status service answers); a refusal throws with its code.
 */
async function ask<S extends typeof WebhookSecretReply | typeof WebhookEndpointReply>(
  nc: NatsConnection,
  req: WebhookRequest,
  schema: S,
): Promise<Extract<z.infer<S>, { ok: true }>> {
  const reply = await nc.request(WEBHOOK_API_SUBJECT, JSON.stringify(req), {
    timeout: REQUEST_TIMEOUT_MS,
  });
  const parsed = schema.parse(JSON.parse(reply.string()));
  if (!parsed.ok) throw errorOfReply(parsed);
  return parsed as Extract<z.infer<S>, { ok: true }>;
}

/** An endpoint of `account` subscribed to every type; resolves with its id and secret. */
export async function createEndpoint(
  nc: NatsConnection,
  account: string,
  url: string,
): Promise<{ id: string; secret: string }> {
  const r = await ask(nc, { v: 1, op: 'create', account_id: account, url }, WebhookSecretReply);
  return { id: r.endpoint.id, secret: r.secret };
}

/** Messages of the endpoint waiting to be sent (or retried). */
export async function pendingOf(nc: NatsConnection, id: string): Promise<number> {
  return (await ask(nc, { v: 1, op: 'get', id }, WebhookEndpointReply)).endpoint.pending;
}

/**
 * Waits until the status pipeline has settled: every status record published so far written (the
 * status stream's consumer has nothing pending or unacknowledged), then no message arriving for
 * QUIET_MS, and with an endpoint, none of its messages waiting (`pending` 0; asked only once the
 * receiver is quiet, so the asking costs the status service next to nothing). Both sides of the
 * on/off pair wait the same way, so their windows end alike. Resolves with whether it settled
 * within `timeoutMs`.
 */
export async function settle(
  nc: NatsConnection,
  jsm: JetStreamManager,
  opts: { endpoint?: string; arrivals: () => number; timeoutMs: number },
): Promise<boolean> {
  const end = performance.now() + opts.timeoutMs;
  const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
  for (;;) {
    const c = await jsm.consumers.info(STATUS_STREAM, STATUS_CONSUMER);
    if (c.num_pending === 0 && c.num_ack_pending === 0) break;
    if (performance.now() > end) return false;
    await sleep(POLL_MS);
  }
  for (let seen = opts.arrivals(); ; ) {
    await sleep(QUIET_MS);
    const now = opts.arrivals();
    if (now !== seen) {
      seen = now;
    } else if (opts.endpoint === undefined || (await pendingOf(nc, opts.endpoint)) === 0) {
      return true;
    }
    if (performance.now() > end) return false;
  }
}
