import { HeraldError } from '@herald/proto';

/** Any UUID (Postgres' gen_random_uuid() makes v4, but ids are not re-validated as such). */
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * Returns the id lower-cased, or throws naming the field, so a typo is a clear error instead of
 * a Postgres `invalid input syntax for type uuid`.
 */
export function parseId(field: string, value: string, hint: string): string {
  if (!UUID.test(value)) {
    throw new HeraldError('invalid_field', `${field} must be a UUID: ${hint}`, { field });
  }
  return value.toLowerCase();
}
