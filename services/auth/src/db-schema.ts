import type { Client, KeyKind, KeyScope, PaymentStatus, PusherUserIds } from '@herald/proto';
import type { ColumnType, Generated, Insertable, Selectable } from 'kysely';

/** A `timestamptz` column with a database default: read as a Date, optional on insert. */
type CreatedAt = ColumnType<Date, Date | string | undefined, never>;

export interface AccountsTable {
  id: Generated<string>;
  /** Stored lower-cased (a check constraint enforces it), so lookups need no `lower()`. */
  email: string;
  /**
   * scrypt hash with its parameters (see account-api/passwords.ts). Null for an account made by
   * the admin CLI: it cannot log in.
   */
  password_hash: ColumnType<string | null, string | null | undefined, string | null>;
  created_at: CreatedAt;
}

/** One per account: the plan and, for a paid plan, when the paid period ends. */
export interface SubscriptionsTable {
  account_id: string;
  /** A plan id of the catalogue (config/plans.json). */
  plan: string;
  /** Null for the free plan, which never lapses. */
  period_end: Date | null;
  updated_at: ColumnType<Date, Date | string | undefined, Date | string>;
}

export interface ApiKeysTable {
  id: Generated<string>;
  account_id: string;
  /** `@herald/access` `hashKey(key)`: SHA-256 hex. The key itself is never stored. */
  key_hash: string;
  /** The key's first 12 characters, so a user can tell keys apart in lists. */
  key_prefix: string;
  kind: KeyKind;
  client: Client;
  /** Web keys: the exact origin requests must come from. Null for mobile keys. */
  domain: string | null;
  expires_at: Date | null;
  revoked_at: Date | null;
  created_at: CreatedAt;
  /** What the key may do (migration 0007); `both` for every key made before. */
  scope: ColumnType<KeyScope, KeyScope | undefined, KeyScope>;
  /** Whether its sockets need a recipient token. */
  require_token: ColumnType<boolean, boolean | undefined, boolean>;
  /** The signing secret, sealed by kit's SecretBox (never in clear); null without tokens. */
  signing_secret: ColumnType<string | null, string | null | undefined, string | null>;
  /** The secret a rotation replaced, sealed, accepted until previous_secret_until. */
  previous_signing_secret: ColumnType<string | null, string | null | undefined, string | null>;
  previous_secret_until: ColumnType<Date | null, Date | null | undefined, Date | null>;
  /** Inbox mode (migration 0009): days each event is kept per recipient; null: not stored. */
  inbox_days: ColumnType<number | null, number | null | undefined, number | null>;
  /**
   * Created with the explicit opt-out of recipient tokens a web inbox key would otherwise require
   * (migration 0010); false for every key made before.
   */
  allow_unsigned_recipients: ColumnType<boolean, boolean | undefined, boolean>;
  /**
   * Its events' payloads go into the account's webhook bodies (migration 0011, issue 39): ingress
   * then carries the payload on the key's `sent` and `pending` status records. False by default.
   */
  webhook_payload: ColumnType<boolean, boolean | undefined, boolean>;
  /**
   * Push fallback (migration 0012, issue 40): its events unproven this many ms after acceptance
   * are pushed. Null: the key never pushes, and every other push column is null too.
   */
  push_after_ms: NullableInt;
  /** The pushes' TTL, seconds; set exactly when push_after_ms is. */
  push_ttl_s: NullableInt;
  /** The key's notification template (an event's own `push` field wins); null: the default title. */
  push_title: NullableText;
  push_body: NullableText;
  /** FCM/APNs may carry the payload (Web Push always may); set exactly when push_after_ms is. */
  push_include_payload: ColumnType<boolean | null, boolean | null | undefined, boolean | null>;
  /** What the user calls it (migration 0014, issue 45), 1 to 64 characters; null: unnamed. */
  name: NullableText;
}

type NullableInt = ColumnType<number | null, number | null | undefined, number | null>;
type NullableText = ColumnType<string | null, string | null | undefined, string | null>;

/**
 * A Pusher app (issue 41, pusher/): what stock Pusher clients and servers name, bound to one key of
 * the same account (composite foreign key), whose plan and limits apply.
 */
export interface PusherAppsTable {
  /** Decimal digits (10 when Herald makes it): the HTTP API's `/apps/{app_id}`. */
  app_id: string;
  /** 20 lower-case hex characters: the socket's `/app/{key}` and `auth_key`. */
  key: string;
  /** The secret, sealed by kit's SecretBox (pusher/secrets.ts); never in clear. */
  secret: string;
  account_id: string;
  key_id: string;
  user_ids: ColumnType<PusherUserIds, PusherUserIds | undefined, PusherUserIds>;
  /** proto's PusherUserChannel template, or null. */
  user_channel: string | null;
  created_at: CreatedAt;
}

/** A login of the account API. Only hashes of its tokens are stored. */
export interface SessionsTable {
  id: Generated<string>;
  account_id: string;
  /** SHA-256 hex of the `herald_session` cookie's value. */
  token_hash: string;
  /** SHA-256 hex of the CSRF token returned at login. */
  csrf_hash: string;
  created_at: CreatedAt;
  expires_at: Date;
}

/** A one-time password-reset token the admin CLI printed. Deleted when used. */
export interface PasswordResetsTable {
  /** SHA-256 hex of the token. */
  token_hash: string;
  account_id: string;
  created_at: CreatedAt;
  expires_at: Date;
}

/** The dashboard's own credential (`hk_dash_`): a listener for a browser, or auth's sender. */
export interface DashboardKeysTable {
  id: Generated<string>;
  account_id: string;
  /** SHA-256 hex of the credential; the value itself is never stored. */
  key_hash: string;
  role: 'listen' | 'send';
  /** A listener's Origin (the dashboard's), required on its socket; null for a sender. */
  domain: string | null;
  /** The login a listener was minted for; null for a sender. */
  session_id: string | null;
  created_at: CreatedAt;
  expires_at: Date;
}

/** A customer backend's NATS user (nats-users/): dispatch for its own account only. */
export interface NatsUsersTable {
  id: Generated<string>;
  account_id: string;
  /** What the backend logs in as: `hb_` and 24 hex digits. */
  username: string;
  /** SHA-256 hex of the password; the password itself is never stored. */
  password_hash: string;
  created_at: CreatedAt;
  revoked_at: Date | null;
}

// Billing's tables (billing/): its store.ts, reminders.ts and callback-check.ts read them.

/** One attempt to pay for a plan (migration 0005_billing). */
export interface PaymentsTable {
  id: Generated<string>;
  account_id: string;
  plan: string;
  /** The PaymentProvider's name: `mpesa`. */
  provider: string;
  /** ISO 4217: `KES`. */
  currency: string;
  /** Integer minor units (cents): KES 1,200 is 120000. */
  amount_minor: number;
  /** Normalised MSISDN, 2547XXXXXXXX. */
  phone: string;
  status: ColumnType<PaymentStatus, PaymentStatus | undefined, PaymentStatus>;
  /** SHA-256 hex of the callback URL's secret token. */
  callback_token_hash: string;
  provider_ref: string | null;
  merchant_ref: string | null;
  receipt: string | null;
  result_code: string | null;
  reason: string | null;
  /** Who started it: `account:<id>` (dashboard) or `admin:<user>` (admin CLI). */
  created_by: string;
  created_at: Date;
  /** A payment still pending then is timed out. */
  expires_at: Date;
  /** When the scheduler next asks the provider about it. */
  next_query_at: Date;
  settled_at: Date | null;
  /** On success: the paid period end it bought. */
  period_end: Date | null;
}

/** The audit trail: one row per thing that happened to a payment. */
export interface PaymentEventsTable {
  id: Generated<string>;
  payment_id: string;
  at: Date;
  /** `account:<id>`, `admin:<user>`, `provider:callback`, `provider:query`, `scheduler`. */
  actor: string;
  action: string;
  /** The payment's status after this event. */
  status: PaymentStatus;
  result_code: string | null;
  receipt: string | null;
  /** Log-safe words: never a token, never a full phone number. */
  detail: string | null;
}

export interface RenewalRemindersTable {
  account_id: string;
  period_end: Date;
  sent_at: Date;
}

/** The tables the auth service owns. */
export interface AuthDb {
  accounts: AccountsTable;
  subscriptions: SubscriptionsTable;
  api_keys: ApiKeysTable;
  sessions: SessionsTable;
  payments: PaymentsTable;
  payment_events: PaymentEventsTable;
  renewal_reminders: RenewalRemindersTable;
  password_resets: PasswordResetsTable;
  dashboard_keys: DashboardKeysTable;
  nats_users: NatsUsersTable;
  pusher_apps: PusherAppsTable;
}

export type Account = Selectable<AccountsTable>;
export type NewAccount = Insertable<AccountsTable>;
export type SubscriptionRow = Selectable<SubscriptionsTable>;
export type ApiKeyRow = Selectable<ApiKeysTable>;
export type NewApiKeyRow = Insertable<ApiKeysTable>;
export type PusherAppRow = Selectable<PusherAppsTable>;
export type SessionRow = Selectable<SessionsTable>;
export type PaymentRow = Selectable<PaymentsTable>;
export type PaymentEventRow = Selectable<PaymentEventsTable>;
