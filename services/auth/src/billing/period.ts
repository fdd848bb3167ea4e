/**
 * One paid month: the same day of the next calendar month, in UTC, clamped to that month's
 * last day (31 January + 1 month = 28 or 29 February), time of day kept.
 */
export function addOneMonth(from: Date): Date {
  const y = from.getUTCFullYear();
  const m = from.getUTCMonth();
  const lastDay = new Date(Date.UTC(y, m + 2, 0)).getUTCDate();
  const day = Math.min(from.getUTCDate(), lastDay);
  return new Date(
    Date.UTC(
      y,
      m + 1,
      day,
      from.getUTCHours(),
      from.getUTCMinutes(),
      from.getUTCSeconds(),
      from.getUTCMilliseconds(),
    ),
  );
}

/** A plan's part in a period: its id, whether it is paid, its monthly price in KES. */
interface PricedPlan {
  id: string;
  paid: boolean;
  price: { kes: number };
}

/**
 * When a month of `bought`, paid now, ends, given the account's current plan and period end.
 *
 * - The plan that runs, renewed: a month from the current period's end (no day is lost).
 * - Another paid plan while a paid one runs: the new plan starts now, for a month plus the unused
 *   time of the running one converted at the ratio of the two monthly prices (KES, what M-Pesa
 *   charges): 29 days of a 1,200 plan become 29 × 1,200 / 6,500 ≈ 5.4 days of a 6,500 one, and the
 *   other way round. A switch neither hands out the dearer plan for the cheaper one's price nor
 *   forfeits what was paid.
 * - No plan, a free one, or a lapsed period: a month from now.
 */
export function paidPeriodEnd(
  current: { plan: PricedPlan | undefined; end: Date | null },
  bought: PricedPlan,
  now: Date,
): Date {
  const running = current.plan?.paid === true && current.end !== null && current.end > now;
  if (!running || !current.plan || !current.end) return addOneMonth(now);
  if (current.plan.id === bought.id) return addOneMonth(current.end);
  const unusedMs = current.end.getTime() - now.getTime();
  // A paid plan priced 0 (a catalogue's choice) converts time for time.
  const ratio = bought.price.kes > 0 ? current.plan.price.kes / bought.price.kes : 1;
  return new Date(addOneMonth(now).getTime() + Math.floor(unusedMs * ratio));
}
