import {
  createOpsHandler,
  createRegistry,
  dbReady,
  natsAnswers,
  SecretBox,
  type Service,
  type ServiceDeps,
} from '@herald/kit';
import type { PlanCatalogue } from '@herald/proto';
import type { Kysely } from 'kysely';
import type { Registry } from 'prom-client';
import { createAccountApi, type RouteMount } from './account-api/app.js';
import { LoginLimiter } from './account-api/login-limiter.js';
import { DashboardDispatch } from './billing/dashboard-dispatch.js';
import { billingRoutes } from './billing/routes.js';
import type { BillingService } from './billing/service.js';
import { createBilling } from './billing/wiring.js';
import type { AuthConfig } from './config.js';
import type { AuthDb } from './db-schema.js';
import { type AuthMetrics, createAuthMetrics } from './metrics.js';
import { startCalloutResponder } from './nats-users/callout-responder.js';
import { loadPlanCatalogue, resolvePlansFile } from './plan-catalogue.js';
import { pushRoutes } from './push/routes.js';
import { startPusherResponder } from './pusher/responder.js';
import { pusherRoutes } from './pusher/routes.js';
import { startVerifyResponder } from './verify-responder.js';
import { webhookRoutes } from './webhooks/routes.js';

export interface AuthServiceDeps extends ServiceDeps {
  db: Kysely<AuthDb>;
  /** The plan catalogue; read from config.PLANS_FILE (or its default) when omitted. */
  catalogue?: PlanCatalogue;
  /** Where metrics go; a fresh registry with process metrics when omitted. */
  registry?: Registry;
  /** Epoch ms; injectable for tests (key expiry, plan lapse, sessions, login windows). */
  now?: () => number;
}

/**
 * Auth as kit's Service: `handler` serves the account API (/v1/...), /healthz and /readyz's status,
 * with JSON 404s for anything else; `opsHandler` /metrics and /readyz with its NATS and Postgres
 * checks.
 */
export interface AuthService extends Service {
  registry: Registry;
  metrics: AuthMetrics;
  catalogue: PlanCatalogue;
  /** The payment flow, when BILLING_PROVIDER is set; its scheduler runs until close(). */
  billing: BillingService | undefined;
  /**
   * Stops answering verifications: drains the subscription and waits for replies in progress.
   * The connection and the database belong to the caller, who closes them afterwards.
   */
  close(): Promise<void>;
}

/**
 * Builds the auth service and starts answering `rt.auth.verify` on the given connection. Binds no
 * port: kit `serve` (or `runService`) does. Throws a PlanCatalogueError naming the file
 * and field when the catalogue is unreadable or invalid.
 */
export function createAuthService(config: AuthConfig, deps: AuthServiceDeps): AuthService {
  const catalogue = deps.catalogue ?? loadPlanCatalogue(resolvePlansFile(config.PLANS_FILE));
  const now = deps.now ?? Date.now;
  const registry = deps.registry ?? createRegistry('auth');
  const metrics = createAuthMetrics(registry);
  const box = config.SECRET_ENCRYPTION_KEY
    ? new SecretBox(config.SECRET_ENCRYPTION_KEY)
    : undefined;
  const responder = startVerifyResponder({
    nc: deps.nc,
    db: deps.db,
    catalogue,
    logger: deps.logger,
    metrics,
    now,
    dashboardConnections: config.DASHBOARD_MAX_CONNECTIONS,
    box,
  });
  // Pusher apps (issue 41): the edge and ingress look them up on rt.auth.pusher.
  const pusher = startPusherResponder({
    nc: deps.nc,
    db: deps.db,
    catalogue,
    logger: deps.logger,
    box,
    metrics,
    now,
    dashboardConnections: config.DASHBOARD_MAX_CONNECTIONS,
  });
  // Customer backends' NATS users: admitted by the auth callout, when its key is configured.
  const callout = config.NATS_CALLOUT_SEED
    ? startCalloutResponder({
        nc: deps.nc,
        db: deps.db,
        seed: config.NATS_CALLOUT_SEED,
        logger: deps.logger,
      })
    : undefined;
  const forwarder = new DashboardDispatch({
    db: deps.db,
    nc: deps.nc,
    logger: deps.logger,
    ttlMs: config.DASHBOARD_KEY_TTL_MS,
    timeoutMs: config.DASHBOARD_NOTICE_TIMEOUT_MS,
    now,
  });
  const ready = async () => {
    const [nats, postgres] = await Promise.all([
      // A round trip, not the connection's state: a reconnecting client is neither closed nor
      // draining, yet every verification and dispatch through it fails.
      natsAnswers(deps.nc),
      // Kysely is invariant in its schema type; the probe runs raw SQL and needs none.
      dbReady(deps.db as unknown as Kysely<unknown>),
    ]);
    return { nats, postgres };
  };
  // /metrics and the readiness checks are for operators: served by `opsHandler`, not publicly.
  const ops = createOpsHandler(registry, ready, { public: true });
  const billing = createBilling(config, { ...deps, catalogue, now, registry, forwarder });
  // The wings' routes on the account API, one line each: a new wing's routes plug in here.
  const mounts: RouteMount[] = [
    billingRoutes(billing?.service),
    webhookRoutes(config.WEBHOOK_API_TIMEOUT_MS),
    pushRoutes(config.PUSH_API_TIMEOUT_MS),
    pusherRoutes(config.MAX_PUSHER_APPS_PER_ACCOUNT),
  ];
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
        box,
        secretOverlapMs: config.TOKEN_SECRET_OVERLAP_MS,
      },
      dashboard: {
        statusTimeoutMs: config.STATUS_TIMEOUT_MS,
        keyTtlMs: config.DASHBOARD_KEY_TTL_MS,
        ...(config.DASHBOARD_DIR ? { dir: config.DASHBOARD_DIR } : {}),
        ...(config.DASHBOARD_INGRESS_URL ? { ingressUrl: config.DASHBOARD_INGRESS_URL } : {}),
        ...(config.DASHBOARD_WS_URL ? { wsUrl: config.DASHBOARD_WS_URL } : {}),
        ...(config.DASHBOARD_CHECKOUT_URL ? { checkoutUrl: config.DASHBOARD_CHECKOUT_URL } : {}),
      },
    },
    mounts,
    ops,
  );
  return {
    handler: app.callback(),
    opsHandler: createOpsHandler(registry, ready),
    registry,
    metrics,
    catalogue,
    billing: billing?.service,
    close: async () => {
      await billing?.scheduler.stop();
      await forwarder.settled();
      await Promise.all([responder.drain(), pusher.drain(), callout?.drain()]);
    },
  };
}
