import {
  createOpsHandler,
  createRegistry,
  dbReady,
  type Handler,
  type Logger,
  natsReady,
} from '@herald/kit';
import type { PlanCatalogue } from '@herald/proto';
import type { Kysely } from 'kysely';
import type { NatsConnection } from 'nats';
import type { Registry } from 'prom-client';
import { createAccountApi } from './account-api/app.js';
import { LoginLimiter } from './account-api/login-limiter.js';
import type { AuthConfig } from './config.js';
import type { AuthDb } from './db-schema.js';
import { type AuthMetrics, createAuthMetrics } from './metrics.js';
import { loadPlanCatalogue, resolvePlansFile } from './plan-catalogue.js';
import { startVerifyResponder } from './verify-responder.js';

export { createAccountApi } from './account-api/app.js';
export type { AccountApiDeps, AccountApiSettings } from './account-api/deps.js';
export { LoginLimiter, type LoginLimiterOptions } from './account-api/login-limiter.js';
export {
  hashPassword,
  MAX_PASSWORD_LENGTH,
  MIN_PASSWORD_LENGTH,
  verifyPassword,
} from './account-api/passwords.js';
export {
  AccountRequest,
  type AccountWithPlan,
  createAccount,
  Email,
  findAccount,
  MAX_EMAIL_LENGTH,
} from './accounts.js';
export {
  type ApiKeySummary,
  type CreatedApiKey,
  countActiveKeys,
  createApiKey,
  findApiKey,
  findApiKeyByHash,
  listApiKeys,
  revokeApiKey,
  setApiKeyDomain,
} from './api-keys.js';
export { type AuthConfig, Env, loadConfig } from './config.js';
export type { Account, ApiKeyRow, AuthDb, SubscriptionRow } from './db-schema.js';
export {
  domainChangedMessage,
  planChangedMessage,
  publishInvalidation,
  resetMessage,
  revokedMessage,
  revokeKey,
} from './invalidation.js';
export { MAX_HOST_LENGTH, normalizeDomain } from './key-domain.js';
export {
  DEFAULT_MAX_LIVE_KEYS,
  issueKey,
  type KeyRules,
  resetTestKey,
  type TestKeyReset,
} from './key-issuing.js';
export {
  expiryFor,
  generateApiKey,
  KEY_LENGTH,
  KEY_PREFIX_LENGTH,
  type KeyRequest,
  type KeySpec,
  keyPrefixOf,
  resolveKeySpec,
  TEST_KEY_TTL_MS,
} from './keys.js';
export { type AuthMetrics, createAuthMetrics } from './metrics.js';
export { createMigrator, migrateToLatest } from './migrate.js';
export {
  DEFAULT_PLANS_FILE,
  findPlan,
  loadPlanCatalogue,
  PlanCatalogueError,
  parsePlanCatalogue,
  resolvePlansFile,
} from './plan-catalogue.js';
export {
  DEFAULT_PLAN,
  findSubscription,
  liveKeyStanding,
  type PlanChange,
  type PlanStanding,
  parseUntil,
  resolvePlanChange,
  setSubscription,
} from './subscriptions.js';
export { type Verification, verifyKeyHash } from './verification.js';

export interface AuthServiceDeps {
  nc: NatsConnection;
  db: Kysely<AuthDb>;
  logger: Logger;
  /** The plan catalogue; read from config.PLANS_FILE (or its default) when omitted. */
  catalogue?: PlanCatalogue;
  /** Where metrics go; a fresh registry with process metrics when omitted. */
  registry?: Registry;
  /** Epoch ms; injectable for tests (key expiry, plan lapse, sessions, login windows). */
  now?: () => number;
}

export interface AuthService {
  /**
   * The account API (/v1/...) and the ops endpoints (/healthz, /readyz = NATS + Postgres,
   * /metrics), with JSON 404s for anything else.
   */
  handler: Handler;
  registry: Registry;
  metrics: AuthMetrics;
  catalogue: PlanCatalogue;
  /**
   * Stops answering verifications: drains the subscription and waits for replies in progress.
   * The connection and the database belong to the caller, who closes them afterwards.
   */
  close(): Promise<void>;
}

/**
 * Builds the auth service and starts answering `rt.auth.verify` on the given connection. Binds no
 * port: serve `handler` with kit createServer/listen. Throws a PlanCatalogueError naming the file
 * and field when the catalogue is unreadable or invalid.
 */
export function createAuthService(config: AuthConfig, deps: AuthServiceDeps): AuthService {
  const catalogue = deps.catalogue ?? loadPlanCatalogue(resolvePlansFile(config.PLANS_FILE));
  const now = deps.now ?? Date.now;
  const registry = deps.registry ?? createRegistry('auth');
  const metrics = createAuthMetrics(registry);
  const responder = startVerifyResponder({
    nc: deps.nc,
    db: deps.db,
    catalogue,
    logger: deps.logger,
    metrics,
    now,
  });
  const ops = createOpsHandler(registry, async () => ({
    nats: natsReady(deps.nc),
    // Kysely is invariant in its schema type; the probe runs raw SQL and needs none.
    postgres: await dbReady(deps.db as unknown as Kysely<unknown>),
  }));
  const app = createAccountApi(
    {
      db: deps.db,
      nc: deps.nc,
      catalogue,
      logger: deps.logger,
      metrics,
      now,
      limiter: new LoginLimiter({
        maxFailures: config.LOGIN_MAX_FAILURES,
        windowMs: config.LOGIN_WINDOW_MS,
        now,
      }),
      settings: {
        allowedOrigin: config.ACCOUNT_API_ORIGIN,
        sessionTtlMs: config.SESSION_TTL_MS,
        scryptLogN: config.PASSWORD_SCRYPT_LOG_N,
        bodyLimitBytes: config.ACCOUNT_API_BODY_LIMIT_BYTES,
        maxLiveKeys: config.MAX_LIVE_KEYS_PER_ACCOUNT,
        trustProxy: config.TRUST_PROXY,
      },
    },
    ops,
  );
  return {
    handler: app.callback(),
    registry,
    metrics,
    catalogue,
    close: () => responder.drain(),
  };
}
