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

/**
 * Where a paid month starts: at the current period's end while it is still running (renewing
 * early loses no day), else now (a lapsed or free account starts afresh).
 */
export function renewalBase(currentEnd: Date | null, paidPlan: boolean, now: Date): Date {
  return paidPlan && currentEnd !== null && currentEnd.getTime() > now.getTime() ? currentEnd : now;
}
