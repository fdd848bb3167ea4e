import type { SecretBox } from '@herald/kit';
import { HeraldError, type PushCredentialsView } from '@herald/proto';
import { type Kysely, sql } from 'kysely';
import webpush from 'web-push';
import type { StatusDb } from '../db-schema.js';
import { NO_PUSH_BOX, nativeView } from './native-credentials.js';

export { NO_PUSH_BOX };

/** A sealed private key opens only for the account it was made for. */
const sealContext = (account: string) => `push_credentials.vapid_private:${account}`;

/** What signing a push needs, the private key open. */
export interface Vapid {
  subject: string;
  publicKey: string;
  privateKey: string;
}

/**
 * Makes (or replaces) the account's VAPID key pair. Replacing it strands every subscription made
 * with the old public key (browsers bind a subscription to it): the push services answer 403, the
 * sender gives up and logs it. Refused without a sealing key.
 */
export async function configureVapid(
  db: Kysely<StatusDb>,
  box: SecretBox | undefined,
  account: string,
  subject: string,
): Promise<{ public_key: string; subject: string }> {
  if (!box) throw new HeraldError('unavailable', NO_PUSH_BOX);
  const keys = webpush.generateVAPIDKeys();
  const sealed = box.seal(keys.privateKey, sealContext(account));
  await db
    .insertInto('push_credentials')
    .values({
      account_id: account,
      vapid_public_key: keys.publicKey,
      vapid_private_sealed: sealed,
      subject,
    })
    .onConflict((oc) =>
      oc.column('account_id').doUpdateSet({
        vapid_public_key: keys.publicKey,
        vapid_private_sealed: sealed,
        subject,
        updated_at: sql`now()`,
      }),
    )
    .execute();
  return { public_key: keys.publicKey, subject };
}

export async function publicKey(
  db: Kysely<StatusDb>,
  account: string,
): Promise<{ public_key: string; subject: string }> {
  const row = await db
    .selectFrom('push_credentials')
    .select(['vapid_public_key', 'subject'])
    .where('account_id', '=', account)
    .executeTakeFirst();
  if (!row) {
    throw new HeraldError(
      'not_found',
      'this account has no Web Push credentials: run `push configure --vapid generate` first',
    );
  }
  return { public_key: row.vapid_public_key, subject: row.subject };
}

/** The account's VAPID key pair, open; undefined when none, or when it does not open. */
export async function openVapid(
  db: Kysely<StatusDb>,
  box: SecretBox | undefined,
  account: string,
): Promise<Vapid | undefined> {
  const row = await db
    .selectFrom('push_credentials')
    .selectAll()
    .where('account_id', '=', account)
    .executeTakeFirst();
  if (!row || !box) return undefined;
  try {
    const privateKey = box.open(row.vapid_private_sealed, sealContext(account));
    return { subject: row.subject, publicKey: row.vapid_public_key, privateKey };
  } catch {
    return undefined;
  }
}

export async function credentialsView(
  db: Kysely<StatusDb>,
  account: string,
): Promise<PushCredentialsView> {
  const [row, count, native] = await Promise.all([
    db
      .selectFrom('push_credentials')
      .select(['vapid_public_key', 'subject'])
      .where('account_id', '=', account)
      .executeTakeFirst(),
    db
      .selectFrom('push_subscriptions')
      .select((eb) => eb.fn.countAll<string>().as('n'))
      .where('account_id', '=', account)
      .executeTakeFirstOrThrow(),
    nativeView(db, account),
  ]);
  return {
    webpush: {
      configured: row !== undefined,
      public_key: row?.vapid_public_key ?? null,
      subject: row?.subject ?? null,
    },
    ...native,
    subscriptions: Number(count.n),
  };
}
