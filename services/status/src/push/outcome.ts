import { nextWait, parseRetryAfter } from '../webhooks/retry.js';
import type { GroupResult } from './completion.js';
import type { PushResult } from './metrics.js';
import type { SendResult } from './send.js';

/** What one answer of a push service means (RFC 8030 §5, and what the big services send). */
export type Verdict =
  | { kind: 'success'; result: PushResult }
  | { kind: 'gone'; result: PushResult }
  | { kind: 'too_large'; result: PushResult }
  | { kind: 'retry'; result: PushResult; retryAfter: string | undefined }
  | { kind: 'rejected'; result: PushResult; alarm: boolean };

export function classify(r: SendResult): Verdict {
  const s = r.status;
  if (s === null) {
    if (r.failure === 'refused') return { kind: 'rejected', result: 'refused', alarm: false };
    return { kind: 'retry', result: 'retry', retryAfter: undefined };
  }
  if (s === 200 || s === 201 || s === 202) return { kind: 'success', result: 'success' };
  if (s === 404 || s === 410) return { kind: 'gone', result: 'gone' };
  if (s === 413) return { kind: 'too_large', result: 'too_large' };
  if (s === 429 || s >= 500) return { kind: 'retry', result: 'retry', retryAfter: r.retryAfter };
  // 400, 401, 403: the request or the VAPID key is wrong, every retry would be too.
  return { kind: 'rejected', result: 'rejected', alarm: s === 400 || s === 401 || s === 403 };
}

/**
 * What FCM's or APNs' answer means: FCM 404 (`UNREGISTERED`), APNs 410 (`Unregistered`) and 400
 * `BadDeviceToken` delete the subscription; 429 and 5xx are retried (Retry-After honoured);
 * 401/403 are credential alarms; another 4xx is given up.
 */
export function classifyFor(kind: string, r: SendResult): Verdict {
  if (kind === 'webpush' || r.status === null) return classify(r);
  const s = r.status;
  if (s === 200) return { kind: 'success', result: 'success' };
  if (kind === 'fcm' && (s === 404 || r.error === 'UNREGISTERED'))
    return { kind: 'gone', result: 'gone' };
  if (kind === 'apns' && (s === 410 || (s === 400 && r.error === 'BadDeviceToken')))
    return { kind: 'gone', result: 'gone' };
  if (s === 413) return { kind: 'rejected', result: 'too_large', alarm: false };
  if (s === 429 || s >= 500) return { kind: 'retry', result: 'retry', retryAfter: r.retryAfter };
  return { kind: 'rejected', result: 'rejected', alarm: s === 401 || s === 403 };
}

/** One subscription's round: the events it was owed and what its push service said. */
export interface SubscriptionRound {
  sub: string;
  owed: ReadonlyArray<{ id: string }>;
  v: Verdict;
}

/**
 * A recipient's round as recorded: pushes accepted, subscriptions gone, and the events some
 * subscription is still owed after a retryable answer, due again after the schedule's next wait
 * (the longest Retry-After given instead) unless that is past their TTL or the schedule ran out
 * (`exhausted` counts those).
 */
export function foldVerdicts(
  rounds: ReadonlyArray<SubscriptionRound | undefined>,
  all: string[],
  live: ReadonlyArray<{ id: string; expiresAt: Date }>,
  attempts: number,
  schedule: readonly number[],
  now: number,
): GroupResult & { exhausted: number } {
  const result: GroupResult & { exhausted: number } = {
    delivered: [],
    gone: [],
    retry: undefined,
    events: all,
    exhausted: 0,
  };
  const owedAgain = new Set<string>();
  let retryAfterMs: number | undefined;
  for (const x of rounds) {
    if (!x) continue;
    if (x.v.kind === 'success')
      result.delivered.push({ subscription: x.sub, events: x.owed.map((e) => e.id) });
    else if (x.v.kind === 'gone') result.gone.push(x.sub);
    else if (x.v.kind === 'retry') {
      for (const e of x.owed) owedAgain.add(e.id);
      const ra = parseRetryAfter(x.v.retryAfter, now);
      if (ra !== undefined) retryAfterMs = Math.max(retryAfterMs ?? 0, ra);
    }
  }
  if (owedAgain.size === 0) return result;
  const wait = nextWait(schedule, attempts, retryAfterMs);
  const keep =
    wait === undefined
      ? []
      : live.filter((e) => owedAgain.has(e.id) && e.expiresAt.getTime() > now + wait);
  if (wait !== undefined && keep.length > 0)
    result.retry = { events: keep.map((e) => e.id), waitMs: wait };
  result.exhausted = owedAgain.size - keep.length;
  return result;
}
