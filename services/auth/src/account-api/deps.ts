import type { Logger, SecretBox } from '@herald/kit';
import type { PlanCatalogue } from '@herald/proto';
import type { Kysely } from 'kysely';
import type { NatsConnection } from 'nats';
import type { AuthDb } from '../db-schema.js';
import type { AuthMetrics } from '../metrics.js';
import type { LoginLimiter } from './login-limiter.js';

/** What the account API's routes share. */
export interface AccountApiDeps {
  db: Kysely<AuthDb>;
  /** Where revocations, resets, plan and domain changes are broadcast. */
  nc: NatsConnection;
  catalogue: PlanCatalogue;
  logger: Logger;
  metrics?: AuthMetrics;
  limiter: LoginLimiter;
  /** Epoch ms; injectable for tests. */
  now: () => number;
  settings: AccountApiSettings;
  /** The dashboard's settings; absent, its routes use defaults and no files are served. */
  dashboard?: DashboardSettings;
}

/** The dashboard web app and its data routes (from auth's Env). */
export interface DashboardSettings {
  /** DASHBOARD_DIR: the built app served at / (SPA fallback); none when absent. */
  dir?: string;
  /** DASHBOARD_INGRESS_URL: where the debug console POSTs /notify. */
  ingressUrl?: string;
  /** DASHBOARD_WS_URL: where the debug console's listener connects. */
  wsUrl?: string;
  /** DASHBOARD_CHECKOUT_URL: the billing seam behind the Pay button; hidden when absent. */
  checkoutUrl?: string;
  /** STATUS_TIMEOUT_MS: how long a figure may take from the status service. */
  statusTimeoutMs: number;
  /** DASHBOARD_KEY_TTL_MS: how long a listener credential lives. Default 1 hour. */
  keyTtlMs?: number;
}

/** The account API's configuration (from auth's Env). */
export interface AccountApiSettings {
  /** ACCOUNT_API_ORIGIN. */
  allowedOrigin: string;
  /** SESSION_TTL_MS. */
  sessionTtlMs: number;
  /** PASSWORD_SCRYPT_LOG_N. */
  scryptLogN: number;
  /** ACCOUNT_API_BODY_LIMIT_BYTES. */
  bodyLimitBytes: number;
  /** MAX_LIVE_KEYS_PER_ACCOUNT. */
  maxLiveKeys: number;
  /** TRUST_PROXY. */
  trustProxy: boolean;
  /** SECRET_ENCRYPTION_KEY's box: seals signing secrets; absent, token keys are refused. */
  box?: SecretBox | undefined;
  /** TOKEN_SECRET_OVERLAP_MS: how long a rotated-out signing secret stays valid. */
  secretOverlapMs?: number;
}
