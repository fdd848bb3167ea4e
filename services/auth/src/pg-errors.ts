/** Postgres SQLSTATE codes the auth service turns into clear errors. */
export const PgCodes = {
  uniqueViolation: '23505',
  foreignKeyViolation: '23503',
} as const;

/** True when `err` is a pg error with this SQLSTATE. */
export function isPgError(err: unknown, code: string): boolean {
  return typeof err === 'object' && err !== null && (err as { code?: unknown }).code === code;
}
