import {
  CommonEnv,
  envBool,
  envInt,
  envPort,
  opsEnv,
  parseEnv,
  requireTls,
  SecretEncryptionKey,
} from '@herald/kit';
import { z } from 'zod';
import { BillingEnvShape, requireBillingSettings } from './billing/config.js';
import { DEFAULT_MAX_LIVE_KEYS } from './keys/issuing.js';
import { DEFAULT_SECRET_OVERLAP_MS } from './keys/signing-secrets.js';
import { PushEnvShape } from './push/config.js';
import { PusherEnvShape } from './pusher/config.js';
import { WebhookEnvShape } from './webhooks/config.js';

/** A Postgres connection URL (also what the admin CLI accepts). */
export const DatabaseUrl = z
  .string({ error: 'is required: a Postgres URL such as postgres://user:pass@host:5432/herald' })
  .regex(
    /^postgres(ql)?:\/\/\S+$/,
    'must be a Postgres URL such as postgres://user:pass@host:5432/herald',
  );
export type DatabaseUrl = z.infer<typeof DatabaseUrl>;

/** Most unrevoked Live keys per account; shared with the admin CLI, which applies the same rule. */
export const MaxLiveKeys = envInt(DEFAULT_MAX_LIVE_KEYS, 1, 10_000);

/** How long a rotated-out signing secret stays valid; shared with the admin CLI. */
export const SecretOverlapMs = envInt(DEFAULT_SECRET_OVERLAP_MS, 0, 30 * 24 * 3600_000);

/**
 * An origin exactly as browsers send it in the Origin header: `https://host[:port]` (or
 * `http://localhost[:port]` for local development), returned normalised.
 */
export const OriginUrl = z
  .string()
  .trim()
  .transform((value, ctx) => {
    let url: URL | undefined;
    try {
      url = new URL(value);
    } catch {
      url = undefined;
    }
    const local = url?.protocol === 'http:' && url.hostname === 'localhost';
    const originOnly =
      url?.pathname === '/' &&
      url.username === '' &&
      url.password === '' &&
      !value.includes('?') &&
      !value.includes('#');
    if (!url || (url.protocol !== 'https:' && !local) || !originOnly) {
      ctx.addIssue({
        code: 'custom',
        message:
          'must be the origin the dashboard is served from, such as https://dashboard.example.com (https, no path; http only for localhost)',
      });
      return z.NEVER;
    }
    return url.origin;
  });

export const Env = CommonEnv.extend({
  /** Port of the listener (account API, /healthz, /readyz's status). Default 8445; 0 picks one. */
  PORT: envPort(8445),
  /** The ops listener (/metrics, /readyz with its checks): OPS_HOST (127.0.0.1), OPS_PORT (9445). */
  ...opsEnv(9445),
  /** Postgres holding accounts and keys. Required. */
  DATABASE_URL: DatabaseUrl,
  /** Apply pending migrations before answering. Default true; turn off to migrate separately. */
  MIGRATE_ON_START: envBool(true),
  /** Most Postgres connections this process holds. Default 10. */
  DB_POOL_MAX: envInt(10, 1, 1000),
  /** The plan catalogue (JSON). Default config/plans.json at the repo root. */
  PLANS_FILE: z.string().optional(),
  /** Most unrevoked Live keys per account. Default 25. */
  MAX_LIVE_KEYS_PER_ACCOUNT: MaxLiveKeys,
  /**
   * Seals the signing secrets of keys that require recipient tokens (AES-256-GCM): the base64 of
   * 32 random bytes. Without it, such keys can neither be created nor verified. Same value on
   * every auth instance and for the admin CLI.
   */
  SECRET_ENCRYPTION_KEY: SecretEncryptionKey.optional(),
  /**
   * How long a signing secret replaced by a rotation stays valid, ms: tokens minted with it keep
   * working meanwhile. Default 24 hours (the edge's default token lifetime); 0 to 30 days.
   */
  TOKEN_SECRET_OVERLAP_MS: SecretOverlapMs,
  /**
   * The only Origin allowed on state-changing account-API requests (and given CORS access): where
   * the dashboard is served from. Default https://localhost:8445, the dev listener itself.
   */
  ACCOUNT_API_ORIGIN: OriginUrl.default('https://localhost:8445'),
  /** How long a login session lasts, ms. Default 8 hours; 1 minute to 30 days. */
  SESSION_TTL_MS: envInt(8 * 3600_000, 60_000, 30 * 24 * 3600_000),
  /** Failed logins allowed per email and client IP within LOGIN_WINDOW_MS. Default 10. */
  LOGIN_MAX_FAILURES: envInt(10, 1, 1000),
  /** The window failed logins are counted in, ms. Default 15 minutes. */
  LOGIN_WINDOW_MS: envInt(15 * 60_000, 1000, 24 * 3600_000),
  /** scrypt cost as log2(N) for new password hashes. Default 15 (N = 32768, 32 MiB). */
  PASSWORD_SCRYPT_LOG_N: envInt(15, 10, 20),
  /** Most bytes an account-API request body may have. Default 16384. */
  ACCOUNT_API_BODY_LIMIT_BYTES: envInt(16_384, 256, 1_048_576),
  /** Take the client IP from X-Forwarded-For (only behind a proxy that sets it). Default false. */
  TRUST_PROXY: envBool(false),
  /** The built dashboard (clients/dashboard/dist) to serve at /; none when unset. */
  DASHBOARD_DIR: z.string().min(1).optional(),
  /** Where the dashboard's debug console sends test events: ingress's base URL. */
  DASHBOARD_INGRESS_URL: z
    .url({ error: 'must be a URL such as https://localhost:8443' })
    .optional(),
  /** Where the dashboard's debug console opens its listener: the edge's wss URL. */
  DASHBOARD_WS_URL: z.url({ error: 'must be a URL such as wss://localhost:8444' }).optional(),
  /**
   * How long a dashboard credential (`hk_dash_`, POST /v1/dashboard/listener) lives, ms; never
   * past the login's own end. The page asks for a new one before it expires. Default 1 hour;
   * 1 minute to 24 hours.
   */
  DASHBOARD_KEY_TTL_MS: envInt(3600_000, 60_000, 24 * 3600_000),
  /**
   * Live dashboard sockets an account may hold at once (one per open dashboard tab), in a pool of
   * their own at the edge: never counted against the plan's connection cap. Default 5; 1 to 100.
   */
  DASHBOARD_MAX_CONNECTIONS: envInt(5, 1, 100),
  /** How long auth waits for ingress to take a billing notice for the dashboard, ms. Default 5000. */
  DASHBOARD_NOTICE_TIMEOUT_MS: envInt(5000, 100, 60_000),
  /** The billing seam: the dashboard's Pay button goes here; hidden when unset. */
  DASHBOARD_CHECKOUT_URL: z.string().min(1).optional(),
  /**
   * The auth callout's account seed (`SA…`, secret): with it, auth admits customer backends' NATS
   * users (`admin nats-user create`), signing each a user JWT for its account's dispatch
   * subjects. Its public key is nats-server's HERALD_NATS_CALLOUT_ISSUER. Unset: none is admitted.
   */
  NATS_CALLOUT_SEED: z
    .string()
    .regex(/^SA[A-Z2-7]{56}$/, {
      error: 'must be an account nkey seed (SA and 56 base32 characters), as `nsc` or nkeys make',
    })
    .optional(),
  /** How long a dashboard figure may take from the status service, ms. Default 2000. */
  STATUS_TIMEOUT_MS: envInt(2000, 100, 60_000),
  ...BillingEnvShape,
  ...WebhookEnvShape,
  ...PushEnvShape,
  ...PusherEnvShape,
})
  .superRefine(requireTls)
  .superRefine(requireBillingSettings);
export type Env = z.infer<typeof Env>;
export type AuthConfig = Env;

export function loadConfig(env: Record<string, string | undefined> = process.env): AuthConfig {
  return parseEnv('auth', Env, env);
}
