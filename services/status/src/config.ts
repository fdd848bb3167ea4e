import { existsSync } from 'node:fs';
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

/** PUSH_VAPID_SUBJECT's default: well formed, reaching nobody (an operator sets a real one). */
export const DEFAULT_VAPID_SUBJECT = 'mailto:push@herald.invalid';

const DAY_MS = 24 * 3600_000;

export const DEFAULT_RETRY_SCHEDULE = '5s,5m,30m,2h,5h,10h,10h';
const UNIT_MS = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: DAY_MS } as const;
/** Most retries a schedule may list. */
export const RETRY_SCHEDULE_MAX = 50;

/** `5s,5m,2h` → the waits in ms; each from 1 ms to 7 days. */
export const retrySchedule = (fallback: string) =>
  z
    .string()
    .default(fallback)
    .transform((text, ctx) => {
      const parts = text.split(',').map((p) => p.trim());
      const out: number[] = [];
      for (const part of parts) {
        const m = /^(\d+)(ms|s|m|h|d)$/.exec(part);
        const ms = m ? Number(m[1]) * UNIT_MS[m[2] as keyof typeof UNIT_MS] : Number.NaN;
        if (!(ms >= 1 && ms <= 7 * DAY_MS)) {
          ctx.addIssue({
            code: 'custom',
            message: `"${part}" is not a wait from 1ms to 7d: write a comma list such as ${fallback}`,
          });
          return z.NEVER;
        }
        out.push(ms);
      }
      if (out.length > RETRY_SCHEDULE_MAX) {
        ctx.addIssue({ code: 'custom', message: `must list at most ${RETRY_SCHEDULE_MAX} waits` });
        return z.NEVER;
      }
      return out;
    });
export const RetrySchedule = retrySchedule(DEFAULT_RETRY_SCHEDULE);
export const DEFAULT_PUSH_RETRY_SCHEDULE = '5s,30s,2m,10m,30m,1h,2h';

/** Webhook settings (issue 39); docs/operations.md, "Webhooks". */
function webhookEnv() {
  return {
    /**
     * Seals endpoint secrets at rest: the base64 of 32 random bytes (`openssl rand -base64 32`).
     * Unset: `create` and `rotate-secret` answer an error naming it; everything else works.
     */
    WEBHOOK_SECRET_KEY: SecretEncryptionKey.optional(),
    /** Allow loopback, private and link-local targets and http:// (development only). Default false. */
    WEBHOOK_ALLOW_PRIVATE: envBool(false),
    /** Messages waiting per endpoint; past it new ones are dropped, counted and logged. Default 100,000. */
    WEBHOOK_ENDPOINT_QUEUE_MAX: envInt(100_000, 1, 10_000_000),
    /** Requests in flight to one endpoint, across every status instance. Default 4. */
    WEBHOOK_ENDPOINT_CONCURRENCY: envInt(4, 1, 100),
    /**
     * Messages an instance claims ahead for one endpoint that is not failing (a failing one gets
     * WEBHOOK_ENDPOINT_CONCURRENCY), so one claim serves many requests. Held unsent for at most
     * WEBHOOK_TIMEOUT_MS, then released. Default 64.
     */
    WEBHOOK_ENDPOINT_PREFETCH: envInt(64, 1, 10_000),
    /** Messages an instance holds claimed and unsent over every endpoint. Default 1000. */
    WEBHOOK_CLAIM_BATCH: envInt(1000, 1, 100_000),
    /** Requests in flight from this instance; 0: this instance sends none. Default 32. */
    WEBHOOK_CONCURRENCY: envInt(32, 0, 1000),
    /** A 2xx within this many ms is success; anything else is retried. Default 15,000. */
    WEBHOOK_TIMEOUT_MS: envInt(15_000, 100, 120_000),
    /**
     * The waits before each retry, a comma list of durations (`500ms`, `5s`, `5m`, `2h`, `1d`),
     * each taken ±20 %; past the last the message is failed. Default "5s,5m,30m,2h,5h,10h,10h".
     */
    WEBHOOK_RETRY_SCHEDULE: RetrySchedule,
    /** An endpoint failing without a success for this long is disabled, ms. Default 5 days. */
    WEBHOOK_DISABLE_AFTER_MS: envInt(5 * DAY_MS, 1000, 365 * DAY_MS),
    /** How long a rotated-out secret keeps signing beside the new one, ms. Default 24 h. */
    WEBHOOK_SECRET_OVERLAP_MS: envInt(DAY_MS, 0, 30 * DAY_MS),
    /** A PEM file of CA certificates trusted beside the system's (NODE_EXTRA_CA_CERTS works too). */
    WEBHOOK_CA_FILE: z
      .string()
      .refine(existsSync, 'must name a readable PEM file of CA certificates')
      .optional(),
    /** Attempts kept per endpoint (the newest). Default 1000. */
    WEBHOOK_ATTEMPTS_KEPT: envInt(1000, 100, 1_000_000),
    /** How often an idle sender looks for due messages, ms (its own writes wake it at once). Default 1000. */
    WEBHOOK_POLL_MS: envInt(1000, 10, 60_000),
    /** Bytes of a response body read (then discarded) before the connection is closed. Default 64 KiB. */
    WEBHOOK_RESPONSE_MAX_BYTES: envInt(64 * 1024, 0, 16 * 1024 * 1024),
    /** At shutdown, how long requests in flight may take to finish, ms. Default 10,000. */
    WEBHOOK_DRAIN_MS: envInt(10_000, 0, 120_000),
  };
}

/** Push fallback settings (issue 40); docs/operations.md, "Push". */
function pushEnv() {
  return {
    /** Allow loopback, private and link-local push endpoints and http:// (development only). Default false. */
    PUSH_ALLOW_PRIVATE: envBool(false),
    /** A PEM file of CA certificates trusted beside the system's for push services (tests). */
    PUSH_CA_FILE: z
      .string()
      .refine(existsSync, 'must name a readable PEM file of CA certificates')
      .optional(),
    /** A push service's answer within this many ms; else the push is retried. Default 10,000. */
    PUSH_TIMEOUT_MS: envInt(10_000, 100, 120_000),
    /** Push requests in flight from this instance; 0: this instance sends none. Default 16. */
    PUSH_CONCURRENCY: envInt(16, 0, 1000),
    /**
     * The safety net's period, ms: the writer tells the sender when each push falls due, and this
     * poll finds what another instance's writer added or a restart left. Default 1000.
     */
    PUSH_POLL_MS: envInt(1000, 10, 60_000),
    /**
     * How long after a recipient's first event falls due its push waits for the next ones to fall
     * due too (they go as one push), ms. At most 900: a push leaves within after_ms + 1 s. Default 200.
     */
    PUSH_COALESCE_MS: envInt(200, 0, 900),
    /**
     * Waits before each retry after a 429, a 5xx or no answer (Retry-After honoured instead when
     * given), each ±20 %; never past the push's TTL. Default "5s,30s,2m,10m,30m,1h,2h".
     */
    PUSH_RETRY_SCHEDULE: retrySchedule(DEFAULT_PUSH_RETRY_SCHEDULE),
    /** Due rows one claim takes (whole recipients), over every recipient. Default 500. */
    PUSH_CLAIM_BATCH: envInt(500, 1, 100_000),
    /**
     * Subscriptions kept per recipient. At the cap a new registration replaces the recipient's
     * oldest (a browser reinstalled or a new phone must not be refused). Default 20.
     */
    PUSH_SUBSCRIPTIONS_PER_RECIPIENT_MAX: envInt(20, 1, 1000),
    /**
     * Topics an account may have (issue 44): adding members to one more is refused 507
     * `topics_full`, naming this setting. Default 10,000.
     */
    TOPICS_PER_ACCOUNT_MAX: envInt(10_000, 1, 10_000_000),
    /**
     * Members one topic may have: an add that would pass it is refused whole, 507 `topics_full`,
     * naming this setting. Default 100,000.
     */
    TOPIC_MEMBERS_MAX: envInt(100_000, 1, 10_000_000),
    /**
     * VAPID's `sub` when `push configure` names none: a mailto: or https: URI. The default is a
     * well-formed address that reaches nobody, so `push configure --vapid generate` works as the
     * issue writes it; push services use it only to contact the sender (docs/operations.md).
     */
    PUSH_VAPID_SUBJECT: VapidSubject.default(DEFAULT_VAPID_SUBJECT),
    /** FCM HTTP v1's origin (`{origin}/v1/projects/{p}/messages:send`); a simulator's in `make dev`. */
    FCM_ORIGIN: ProviderOrigin.default('https://fcm.googleapis.com'),
    /** Where FCM's service-account JWT is exchanged for an access token (also the JWT's `aud`). */
    FCM_TOKEN_URI: ProviderUrl.default('https://oauth2.googleapis.com/token'),
    /** APNs' origin (HTTP/2 over TLS) for accounts configured without `--apns-sandbox`. */
    APNS_ORIGIN: ProviderOrigin.default('https://api.push.apple.com'),
    /** APNs' origin for accounts configured with `--apns-sandbox` (development builds of apps). */
    APNS_SANDBOX_ORIGIN: ProviderOrigin.default('https://api.sandbox.push.apple.com'),
  };
}

/** Most characters of a provider URL setting. */
export const PROVIDER_URL_MAX = 2048;

/** A provider's URL: absolute http(s), at most PROVIDER_URL_MAX characters. */
const ProviderUrl = z
  .string()
  .max(PROVIDER_URL_MAX, `must be at most ${PROVIDER_URL_MAX} characters`)
  .refine((s) => URL.canParse(s) && /^https?:$/.test(new URL(s).protocol), {
    message: 'must be an absolute http(s) URL such as https://oauth2.googleapis.com/token',
  });

/** A provider's origin: scheme, host and port only (no path, query or trailing slash). */
const ProviderOrigin = ProviderUrl.refine((s) => !URL.canParse(s) || new URL(s).origin === s, {
  message: 'must be an origin only (https://host[:port], no path or trailing slash)',
});

/** VAPID's `sub` claim (RFC 8292 §2.1): a contact URI. */
export const VapidSubject = z
  .string()
  .max(2048)
  .regex(
    /^(mailto:\S+@\S+|https:\/\/\S+)$/,
    'must be a mailto: or https: URI such as mailto:ops@example.com',
  );

export const Env = CommonEnv.extend({
  /** Port of the health listener (/healthz, /readyz's status; TLS). Default 8447; 0 picks one. */
  PORT: envPort(8447),
  /** The ops listener (/metrics, /readyz with its checks): OPS_HOST (127.0.0.1), OPS_PORT (9447). */
  ...opsEnv(9447),
  /** Postgres holding the status tables. Required. */
  DATABASE_URL: z
    .string({ error: 'is required: a Postgres URL such as postgres://user:pass@host:5432/herald' })
    .regex(
      /^postgres(ql)?:\/\/\S+$/,
      'must be a Postgres URL such as postgres://user:pass@host:5432/herald',
    ),
  /** Apply pending migrations before consuming. Default true. */
  MIGRATE_ON_START: envBool(true),
  /** Most Postgres connections this process holds. Default 5. */
  DB_POOL_MAX: envInt(5, 1, 1000),
  /**
   * Most status records written in one transaction. Default 1000. At most 7000: one insert binds
   * 9 parameters per event row, and Postgres refuses a statement with more than 65,535.
   */
  STATUS_BATCH_MAX: envInt(1000, 1, 7_000),
  /**
   * How long the writer waits to fill a batch before writing what it has, ms (a JetStream fetch's
   * expiry, which nats.js takes from 1000 up). Default 1000.
   */
  STATUS_BATCH_WAIT_MS: envInt(1000, 1000, 30_000),
  /** Status rows older than this many days are trimmed when retention asks. Default 30. */
  STATUS_RETENTION_DAYS: envInt(30, 1, 3650),
  /** How long the stream keeps records the writer has not written (writer down), ms. Default 7 days. */
  STATUS_STREAM_MAX_AGE_MS: envInt(7 * DAY_MS, 60_000, 365 * DAY_MS),
  /** Byte cap of the status stream. Default 1 GiB. */
  STATUS_STREAM_MAX_BYTES: envInt(1024 * 1024 * 1024, 1024 * 1024),
  /** Replicas of the status stream: 1 on one server, 3 in a cluster. */
  NATS_REPLICAS: envInt(1, 1, 5),
  /**
   * A `delivered` record whose event the writer has not seen yet (its `pending` record still in
   * flight) is retried this many times, a second apart, before it is written without a key.
   */
  STATUS_ORPHAN_RETRIES: envInt(5, 0, 100),
  /**
   * Inbox mode: most events kept per recipient. Past it a new event takes the place of the
   * recipient's oldest read one; when none is read the event is refused (`inbox_full`, 507).
   */
  INBOX_MAX_PER_RECIPIENT: envInt(10_000, 1, 1_000_000),
  /** Most inbox events kept in one transaction (concurrent stores share it). Default 1000. */
  INBOX_BATCH_MAX: envInt(1000, 1, 10_000),
  /** A key's refusals kept for the dashboard (issue 45); older ones are trimmed on write. Default 50. */
  REFUSALS_PER_KEY: envInt(50, 1, 1000),
  /**
   * A key's refusal merges into the last stored one of its kind (same status, code, field, Origin,
   * route) when that one's last time is at most this long before it, ms: a steady flood is one
   * row with a count. 0 merges nothing. Default 60000.
   */
  REFUSAL_MERGE_MS: envInt(60_000, 0, 3_600_000),
  ...webhookEnv(),
  ...pushEnv(),
}).superRefine(requireTls);
export type Env = z.infer<typeof Env>;
export type StatusConfig = Env;

export function loadConfig(env: Record<string, string | undefined> = process.env): StatusConfig {
  return parseEnv('status', Env, env);
}
