import { waitUntil } from '../load/pace.js';
import { SETTLE_TIMEOUT_MS } from './context.js';
import type { Target } from './online-targets.js';

/** After an overload window, how long duplicates (a stored copy of a delivered event) may take. */
const DUPLICATE_GRACE_MS = 1000;

/** What one window of a figure 2 target delivered, and how its requests fared. */
export interface WindowResult {
  rate: number;
  delivered: number;
  duplicates: number;
  stored: number;
  late: number;
  lost: number;
  failed: number;
  used: number;
  firstError?: string;
}

/**
 * One window of a target (figure 2's, and figure 7's on/off pair, which uses the same harness): its
 * load for `windowMs` with events numbered from `base`, then until every accepted event reached
 * the sockets (at most SETTLE_TIMEOUT_MS); the rate counts distinct events delivered, from the
 * load's start to the last arrival.
 */
export async function measureWindow(
  t: Target,
  windowMs: number,
  base: number,
): Promise<WindowResult> {
  t.tracker.start(base, { distinct: !t.countAll });
  const { expected, stored, used, start, loop } = await t.load(windowMs, base);
  await waitUntil(() => t.tracker.received >= expected, SETTLE_TIMEOUT_MS);
  // A stored copy of an event already delivered comes after the live one: give it time to show.
  if (t.job === 'overload') await new Promise((r) => setTimeout(r, DUPLICATE_GRACE_MS));
  const elapsed = (t.tracker.lastAt - start) / 1000;
  return {
    rate: elapsed > 0 ? t.tracker.received / elapsed : 0,
    delivered: t.tracker.received,
    duplicates: t.tracker.duplicates,
    stored,
    late: t.tracker.late,
    lost: Math.max(0, expected - t.tracker.received),
    failed: loop?.failed ?? 0,
    used,
    ...(loop?.firstError === undefined ? {} : { firstError: loop.firstError }),
  };
}
