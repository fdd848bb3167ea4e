import type { Logger } from '@herald/kit';
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
}
