import { CONNECTIONS_BUCKET } from '@herald/proto';
import type { NatsConnection } from 'nats';
import type { LeftoverCheck } from './summary.js';

/** The edge's heartbeat keys in the connections bucket: owned by a live edge, not by a socket. */
const ALIVE_PREFIX = '_alive.';
const POLL_MS = 1000;

/** What nats-server holds that an owner could leave behind: consumers and subscriptions. */
export interface NatsHoldings {
  consumers: number;
  subscriptions: number;
}

export async function natsHoldings(monitorUrl: string): Promise<NatsHoldings> {
  const get = async (path: string) =>
    (await fetch(`${monitorUrl}${path}`, { signal: AbortSignal.timeout(5000) })).json() as Promise<
      Record<string, number>
    >;
  const [jsz, subsz] = await Promise.all([get('/jsz'), get('/subsz')]);
  return { consumers: jsz.consumers ?? 0, subscriptions: subsz.num_subscriptions ?? 0 };
}

/** Every subscription nats-server holds, by subject (`/connz?subs=1`, each connection's list). */
export async function subscriptionSubjects(monitorUrl: string): Promise<string[]> {
  const res = await fetch(`${monitorUrl}/connz?subs=1&limit=100000`, {
    signal: AbortSignal.timeout(5000),
  });
  const body = (await res.json()) as { connections?: Array<{ subscriptions_list?: string[] }> };
  return (body.connections ?? []).flatMap((c) => c.subscriptions_list ?? []);
}

/** The subscriptions whose subject names one of `recipients` (a token of it). */
export function recipientSubscriptions(
  subjects: readonly string[],
  recipients: ReadonlySet<string>,
): string[] {
  return subjects.filter((s) => s.split('.').some((token) => recipients.has(token)));
}

/** Keys of the connections bucket that count sockets (every pool's `<pool>.<edgeId>`). */
export async function socketCountKeys(nc: NatsConnection): Promise<string[]> {
  const kv = await nc.jetstream().views.kv(CONNECTIONS_BUCKET, { bindOnly: true });
  const keys: string[] = [];
  for await (const k of await kv.keys()) if (!k.startsWith(ALIVE_PREFIX)) keys.push(k);
  return keys;
}

/**
 * Polls `read` until it is at most `allowed` or `timeoutMs` passed (an owner's close reaches
 * nats-server asynchronously: a consumer's inactivity timer, a KV delete in flight); resolves
 * with the last value read, which the summary compares with `allowed`.
 */
export async function settled(
  what: string,
  read: () => Promise<number>,
  allowed: number,
  timeoutMs: number,
): Promise<LeftoverCheck> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    let found = Number.POSITIVE_INFINITY;
    try {
      found = await read();
    } catch {
      // The server not answering yet counts as not settled.
    }
    if (found <= allowed || Date.now() > deadline) return { what, found, allowed };
    await new Promise((r) => setTimeout(r, POLL_MS));
  }
}
