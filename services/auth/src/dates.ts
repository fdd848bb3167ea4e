import { HeraldError } from '@herald/proto';

/** A date as the account API and the admin tool write it: ISO 8601 in UTC, or null. */
export function iso(date: Date | null): string | null {
  return date === null ? null : date.toISOString();
}

const DATE_ONLY = /^\d{4}-\d{2}-\d{2}$/;
const DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,3})?)?(Z|[+-]\d{2}:\d{2})$/i;

/** The forms {@link parseInstant} takes, as its errors name them. */
export const INSTANT_FORMS =
  'a date (2025-07-01, meaning midnight UTC) or a date-time with its zone (2025-07-01T12:00:00Z)';

/**
 * Parses an ISO 8601 date (midnight UTC) or date-time with its zone, refusing dates that do not
 * exist; the error names `field` and ends with `hint`. A time without a zone is refused: which
 * zone was meant cannot be told.
 */
export function parseInstant(value: string, field: string, hint: string): Date {
  const text = value.trim();
  const isDate = DATE_ONLY.test(text);
  if (!isDate && !DATE_TIME.test(text)) {
    throw new HeraldError('invalid_field', `${field} "${value}" is not a date: ${hint}`, {
      field,
    });
  }
  const date = new Date(isDate ? `${text}T00:00:00Z` : text);
  // Date rolls 2025-02-30 over to March 2; a date that does not exist is a typo, not a wish.
  const [y, m, d] = text.slice(0, 10).split('-').map(Number);
  const calendar = new Date(Date.UTC(y ?? 0, (m ?? 1) - 1, d ?? 0));
  if (
    Number.isNaN(date.getTime()) ||
    calendar.getUTCFullYear() !== y ||
    calendar.getUTCMonth() !== (m ?? 1) - 1 ||
    calendar.getUTCDate() !== d
  ) {
    throw new HeraldError('invalid_field', `${field} "${value}" is not a real date: ${hint}`, {
      field,
    });
  }
  return date;
}
