/** A date as the account API and the admin tool write it: ISO 8601 in UTC, or null. */
export function iso(date: Date | null): string | null {
  return date === null ? null : date.toISOString();
}
