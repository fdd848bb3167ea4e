import type { SecretBox } from '@herald/kit';
import {
  type ApnsKey,
  type DevicePushKind,
  type FcmServiceAccount,
  HeraldError,
  type PushCredentialsView,
} from '@herald/proto';
import { importPKCS8 } from 'jose';
import { type Kysely, sql } from 'kysely';
import type { StatusDb } from '../db-schema.js';

/** Why nothing can be configured: no sealing key. */
export const NO_PUSH_BOX =
  'this Herald has no WEBHOOK_SECRET_KEY, which seals push private keys at rest as it does webhook secrets: the operator sets it on the status service (the base64 of 32 random bytes, `openssl rand -base64 32`)';

/** A sealed private key opens only for the account and provider it was stored for. */
const sealContext = (account: string, provider: DevicePushKind) =>
  `push_provider_credentials.private:${provider}:${account}`;

/** An account's FCM service account, the key open; `version` changes with every configure. */
export interface FcmCredentials {
  projectId: string;
  clientEmail: string;
  privateKey: string;
  version: string;
}

/** An account's APNs token key, open. */
export interface ApnsCredentials {
  keyId: string;
  teamId: string;
  topic: string;
  sandbox: boolean;
  privateKey: string;
  version: string;
}

export interface NativeCredentials {
  fcm: FcmCredentials | undefined;
  apns: ApnsCredentials | undefined;
}

/** Stores (or replaces) the account's FCM service account; the key must import as RS256. */
export async function configureFcm(
  db: Kysely<StatusDb>,
  box: SecretBox | undefined,
  account: string,
  sa: FcmServiceAccount,
): Promise<void> {
  await checkKey(sa.private_key, 'RS256', 'service_account.private_key', 'an RSA key');
  await store(
    db,
    box,
    account,
    'fcm',
    { project_id: sa.project_id, client_email: sa.client_email },
    sa.private_key,
  );
}

/** Stores (or replaces) the account's APNs token key; the key must import as ES256 (a .p8 file). */
export async function configureApns(
  db: Kysely<StatusDb>,
  box: SecretBox | undefined,
  account: string,
  k: ApnsKey,
): Promise<void> {
  await checkKey(k.key_pem, 'ES256', 'apns.key_pem', 'the P-256 key of a .p8 file');
  const settings = { key_id: k.key_id, team_id: k.team_id, topic: k.topic, sandbox: k.sandbox };
  await store(db, box, account, 'apns', settings, k.key_pem);
}

async function checkKey(pem: string, alg: string, field: string, what: string): Promise<void> {
  try {
    await importPKCS8(pem.trim(), alg);
  } catch {
    throw new HeraldError(
      'invalid_field',
      `${field} must be ${what} in PKCS#8 PEM (-----BEGIN PRIVATE KEY-----)`,
      {
        field,
      },
    );
  }
}

async function store(
  db: Kysely<StatusDb>,
  box: SecretBox | undefined,
  account: string,
  provider: DevicePushKind,
  settings: Record<string, unknown>,
  pem: string,
): Promise<void> {
  if (!box) throw new HeraldError('unavailable', NO_PUSH_BOX);
  const sealed = box.seal(pem.trim(), sealContext(account, provider));
  const json = JSON.stringify(settings);
  await db
    .insertInto('push_provider_credentials')
    .values({ account_id: account, provider, settings: json, private_sealed: sealed })
    .onConflict((oc) =>
      oc.columns(['account_id', 'provider']).doUpdateSet({
        settings: json,
        private_sealed: sealed,
        updated_at: sql`now()`,
      }),
    )
    .execute();
}

/** The account's FCM and APNs credentials, open; a provider is undefined when none, or when it does not open. */
export async function openNative(
  db: Kysely<StatusDb>,
  box: SecretBox | undefined,
  account: string,
): Promise<NativeCredentials> {
  const rows = await db
    .selectFrom('push_provider_credentials')
    .selectAll()
    .where('account_id', '=', account)
    .execute();
  const out: NativeCredentials = { fcm: undefined, apns: undefined };
  if (!box) return out;
  for (const row of rows) {
    let privateKey: string;
    try {
      privateKey = box.open(
        row.private_sealed,
        sealContext(account, row.provider as DevicePushKind),
      );
    } catch {
      continue;
    }
    const s = row.settings as Record<string, unknown>;
    const version = `${row.updated_at.getTime()}`;
    if (row.provider === 'fcm') {
      out.fcm = {
        projectId: String(s.project_id),
        clientEmail: String(s.client_email),
        privateKey,
        version,
      };
    } else if (row.provider === 'apns') {
      out.apns = {
        keyId: String(s.key_id),
        teamId: String(s.team_id),
        topic: String(s.topic),
        sandbox: s.sandbox === true,
        privateKey,
        version,
      };
    }
  }
  return out;
}

/** What the credentials view shows of FCM and APNs: configured, and the public parts only. */
export async function nativeView(
  db: Kysely<StatusDb>,
  account: string,
): Promise<Pick<PushCredentialsView, 'fcm' | 'apns'>> {
  const rows = await db
    .selectFrom('push_provider_credentials')
    .select(['provider', 'settings'])
    .where('account_id', '=', account)
    .execute();
  const of = (p: string) =>
    rows.find((r) => r.provider === p)?.settings as Record<string, unknown> | undefined;
  const fcm = of('fcm');
  const apns = of('apns');
  const str = (v: unknown) => (typeof v === 'string' ? v : null);
  return {
    fcm: {
      configured: fcm !== undefined,
      project_id: str(fcm?.project_id),
      client_email: str(fcm?.client_email),
    },
    apns: {
      configured: apns !== undefined,
      key_id: str(apns?.key_id),
      team_id: str(apns?.team_id),
      topic: str(apns?.topic),
      sandbox: typeof apns?.sandbox === 'boolean' ? apns.sandbox : null,
    },
  };
}
