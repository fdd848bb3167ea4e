import { HeraldError } from '@herald/proto';

/** The longest key name (migration 0014's check). */
export const KEY_NAME_MAX_LENGTH = 64;

/**
 * A key's name as stored: trimmed, null when absent or blank (lists then show the prefix).
 * Throws naming `name` past {@link KEY_NAME_MAX_LENGTH} characters or with a control character.
 */
export function resolveKeyName(name: string | null | undefined): string | null {
  const trimmed = (name ?? '').trim();
  if (trimmed === '') return null;
  if (trimmed.length > KEY_NAME_MAX_LENGTH || /\p{Cc}/u.test(trimmed)) {
    throw new HeraldError(
      'invalid_field',
      `name must be at most ${KEY_NAME_MAX_LENGTH} characters without line breaks or control characters: what you call the key, such as "checkout backend" (leave it empty for none)`,
      { field: 'name' },
    );
  }
  return trimmed;
}
