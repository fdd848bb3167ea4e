import { HeraldError } from '@herald/proto';
import type { Kysely } from 'kysely';
import { z } from 'zod';
import type { AuthDb } from './db-schema.js';
import { parseId } from './ids.js';
import { isPgError, PgCodes } from './pg-errors.js';
import { DEFAULT_PLAN } from './subscriptions.js';

/** RFC 5321's limit on an address. */
export const MAX_EMAIL_LENGTH = 254;

/** An account owner's address, stored lower-cased so it is unique in any case. */
export const Email = z
  .string({ error: 'email is required: give the account owner address, such as ops@example.com' })
  .trim()
  .toLowerCase()
  .max(MAX_EMAIL_LENGTH, `email must be at most ${MAX_EMAIL_LENGTH} characters`)
  .pipe(z.email({ error: 'email must be an address such as ops@example.com' }));
export type Email = z.infer<typeof Email>;

/** What creating an account takes. */
export const AccountRequest = z.object({
  email: Email,
  /** An already-hashed password (account-api/passwords.ts); absent for CLI-made accounts. */
  password_hash: z.string().min(1).optional(),
});
export type AccountRequest = z.input<typeof AccountRequest>;

/** An account with its plan: what creation returns and what lookups show. */
export interface AccountWithPlan {
  id: string;
  email: string;
  created_at: Date;
  plan: string;
  /** When the paid period ends; null for the free plan. */
  period_end: Date | null;
}

/**
 * Creates an account and its subscription in one transaction: the free plan unless `plan` says
 * otherwise (already checked against the catalogue by resolvePlanChange). Throws a
 * {@link HeraldError} naming `email` when it is bad (400) or already has an account (409
 * `account_exists`).
 */
export async function createAccount(
  db: Kysely<AuthDb>,
  request: AccountRequest,
  plan: { plan: { id: string }; period_end: Date | null } = {
    plan: { id: DEFAULT_PLAN },
    period_end: null,
  },
): Promise<AccountWithPlan> {
  const parsed = AccountRequest.safeParse(request);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const field = String(issue?.path[0] ?? 'email');
    throw new HeraldError('invalid_field', issue?.message ?? `${field} is invalid`, { field });
  }
  const { email, password_hash } = parsed.data;
  try {
    return await db.transaction().execute(async (tx) => {
      const account = await tx
        .insertInto('accounts')
        .values({ email, password_hash: password_hash ?? null })
        .returning(['id', 'email', 'created_at'])
        .executeTakeFirstOrThrow();
      const sub = await tx
        .insertInto('subscriptions')
        .values({ account_id: account.id, plan: plan.plan.id, period_end: plan.period_end })
        .returning(['plan', 'period_end'])
        .executeTakeFirstOrThrow();
      return { ...account, ...sub };
    });
  } catch (err) {
    if (isPgError(err, PgCodes.uniqueViolation)) {
      throw new HeraldError(
        'account_exists',
        `email ${email} already has an account: log in to it, or give another address`,
        { field: 'email' },
      );
    }
    throw err;
  }
}

/** The account with this id and its plan, or undefined. Never the password hash. */
export async function findAccount(
  db: Kysely<AuthDb>,
  id: string,
): Promise<AccountWithPlan | undefined> {
  const accountId = parseId('account', id, 'give the id `account create` printed');
  const row = await db
    .selectFrom('accounts')
    .leftJoin('subscriptions', 'subscriptions.account_id', 'accounts.id')
    .select([
      'accounts.id',
      'accounts.email',
      'accounts.created_at',
      'subscriptions.plan',
      'subscriptions.period_end',
    ])
    .where('accounts.id', '=', accountId)
    .executeTakeFirst();
  return row && { ...row, plan: row.plan ?? DEFAULT_PLAN, period_end: row.period_end ?? null };
}
