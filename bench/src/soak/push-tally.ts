import type { PushArrival } from '@herald/testkit';
import type { DeliveryLedger } from './ledger.js';

/** What the push service got during the soak, joined with the ledger by event id. */
export interface PushTally {
  /** Events of the push key's recipients answered 200/202. */
  accepted: number;
  /** Pushes the push service answered 201 and decrypted (one push may carry several ids). */
  pushes: number;
  /** Distinct event ids those pushes named. */
  events: number;
  /** Pushes that did not decrypt (RFC 8291) or whose VAPID header did not verify (RFC 8292). */
  broken: number;
  /** Ids pushed to a subscription of another recipient than the event's: never allowed. */
  misrouted: number;
  /**
   * Ids pushed that were never answered 200/202 (an answer lost around a restart): reported, as
   * the ledger's own `unanswered`.
   */
  unanswered: number;
}

/**
 * Joins the push service's arrivals with the ledger: each arrival's subscription (its endpoint's
 * last segment) belongs to one recipient, and every id its message names must be an event of that
 * recipient.
 */
export function pushTally(
  arrivals: readonly PushArrival[],
  recipientBySubscription: ReadonlyMap<string, string>,
  ledger: Pick<DeliveryLedger, 'recipientOf' | 'acceptedFor'>,
): PushTally {
  const ids = new Set<string>();
  let pushes = 0;
  let broken = 0;
  let misrouted = 0;
  let unanswered = 0;
  for (const a of arrivals) {
    if (a.error !== null) {
      broken++;
      continue;
    }
    if (a.status !== 201) continue;
    pushes++;
    const recipient = recipientBySubscription.get(a.id);
    const named = (a.message as { ids?: unknown } | undefined)?.ids;
    for (const id of Array.isArray(named) ? named : []) {
      const own = typeof id === 'string' ? ledger.recipientOf(id) : undefined;
      if (own === undefined) unanswered++;
      else if (own !== recipient) misrouted++;
      else ids.add(id as string);
    }
  }
  return {
    accepted: ledger.acceptedFor(new Set(recipientBySubscription.values())),
    pushes,
    events: ids.size,
    broken,
    misrouted,
    unanswered,
  };
}

/** Why the push part of the run fails; empty when it passes. */
export function pushFailures(t: PushTally): string[] {
  const out: string[] = [];
  if (t.broken > 0)
    out.push(`${t.broken} push(es) did not decrypt or carried a VAPID header that did not verify`);
  if (t.misrouted > 0)
    out.push(`${t.misrouted} pushed id(s) went to another recipient's subscription`);
  if (t.accepted > 0 && t.pushes === 0)
    out.push(`no push arrived although ${t.accepted} event(s) of the push key were accepted`);
  return out;
}
