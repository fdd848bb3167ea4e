import {
  FANOUTS_PAGE_MAX,
  HeraldError,
  REFUSALS_PAGE_MAX,
  type StatusQuery,
  StatusWindow,
  TOPICS_PAGE_MAX,
} from '@herald/proto';
import { StatusClient } from '@herald/status-client';
import type Router from '@koa/router';
import { z } from 'zod';
import { findAccount } from '../accounts.js';
import { broadcastRevoked } from '../invalidation.js';
import { mintDashboardKey } from '../keys/dashboard-keys.js';
import { DEFAULT_SECRET_OVERLAP_MS } from '../keys/signing-secrets.js';
import { listApiKeys } from '../keys/store.js';
import { keyView } from '../keys/views.js';
import { useResetToken } from '../password-resets.js';
import type { AccountApiDeps } from './deps.js';
import { parseBody, readJson } from './json-body.js';
import { openConnections } from './open-connections.js';
import { hashPassword } from './passwords.js';
import { ResetBody } from './schemas.js';
import { requireSession, type SessionState } from './session-auth.js';

const StatusParams = z.object({
  window: StatusWindow.default('hour'),
  key_id: z.string().min(1).max(64).optional(),
});

const EventsParams = z.object({
  key_id: z.string().min(1).max(64).optional(),
  id: z.string().min(1).max(64).optional(),
  recipient: z.string().min(1).max(64).optional(),
  limit: z.coerce.number().int().min(1).max(200).default(50),
});

const RefusalsParams = z.object({
  key_id: z.string({ error: 'key_id is required: the id of one of your keys' }).min(1).max(64),
  limit: z.coerce.number().int().min(1).max(REFUSALS_PAGE_MAX).default(50),
});

const TopicsParams = z.object({
  after: z.string().min(1).max(128).optional(),
  limit: z.coerce.number().int().min(1).max(TOPICS_PAGE_MAX).default(100),
});

const TopicEventsParams = z.object({
  limit: z.coerce.number().int().min(1).max(FANOUTS_PAGE_MAX).default(20),
});

/**
 * What the dashboard reads beyond the account API: the plan catalogue, delivery figures from the
 * status service, keys with their last use, open connections, its own settings, and the
 * password reset that a support-printed token allows. Every figure is the session's account's.
 */
export function dashboardRoutes(router: Router<SessionState>, deps: AccountApiDeps): void {
  const { db, settings } = deps;
  const session = requireSession(db, deps.now);
  const dashboard = deps.dashboard ?? { statusTimeoutMs: 2000 };
  const statusClient = new StatusClient(deps.nc);
  const status = (query: StatusQuery) =>
    statusClient.query(query, {
      timeoutMs: dashboard.statusTimeoutMs,
      unavailable:
        'The status service did not answer: delivery figures are unavailable for now, retry shortly',
    });

  router.get('/v1/plans', async (ctx) => {
    ctx.body = { plans: deps.catalogue.plans, test_key_limits: deps.catalogue.test_key_limits };
  });

  router.get('/v1/dashboard/config', async (ctx) => {
    ctx.body = {
      ingress_url: dashboard.ingressUrl ?? null,
      ws_url: dashboard.wsUrl ?? null,
      // The seam for billing: a Pay button appears when a checkout path is configured.
      checkout_url: dashboard.checkoutUrl ?? null,
      // How long a rotated signing secret keeps working: the Rotate button's question says it.
      secret_overlap_ms: settings.secretOverlapMs ?? DEFAULT_SECRET_OVERLAP_MS,
    };
  });

  // The dashboard's own Herald credential: a socket to the account's dashboard recipient, where
  // auth dispatches billing notices (docs/api.md, "Dashboard listener").
  router.post('/v1/dashboard/listener', session, async (ctx) => {
    if (!dashboard.wsUrl) {
      throw new HeraldError(
        'unavailable',
        'Live dashboard updates are off on this server (DASHBOARD_WS_URL is unset): the page polls instead',
      );
    }
    const now = deps.now();
    const { id: sessionId, account_id: accountId, expires_at: sessionEnd } = ctx.state.session;
    const ttl = dashboard.keyTtlMs ?? DEFAULT_LISTENER_TTL_MS;
    // The origin guard let this Origin through (the dashboard's); the socket must come from it too.
    const origin = ctx.get('Origin');
    const minted = await mintDashboardKey(
      db,
      {
        accountId,
        role: 'listen',
        domain: origin === '' ? null : origin.toLowerCase(),
        sessionId,
        expiresAt: new Date(Math.min(now + ttl, sessionEnd.getTime())),
      },
      new Date(now),
    );
    ctx.status = 201;
    ctx.body = {
      api_key: minted.key,
      recipient: minted.recipient,
      client: 'web',
      ws_url: dashboard.wsUrl,
      expires_at: minted.expires_at.toISOString(),
    };
  });

  router.get('/v1/dashboard/status', session, async (ctx) => {
    const q = parseQuery(StatusParams, ctx.query);
    const answer = await status({
      v: 1,
      op: 'counts',
      account_id: ctx.state.session.account_id,
      window: q.window,
      ...(q.key_id ? { key_id: q.key_id } : {}),
    });
    ctx.body = { window: q.window, counts: answer.counts, series: answer.series ?? [] };
  });

  router.get('/v1/dashboard/events', session, async (ctx) => {
    const q = parseQuery(EventsParams, ctx.query);
    const answer = await status({
      v: 1,
      op: 'recent',
      account_id: ctx.state.session.account_id,
      limit: q.limit,
      ...(q.key_id ? { key_id: q.key_id } : {}),
      ...(q.id ? { id: q.id } : {}),
      ...(q.recipient ? { recipient: q.recipient } : {}),
    });
    ctx.body = { events: answer.events ?? [] };
  });

  // A key's recent refusals (issue 45): what ingress refused for it. The status service answers
  // only the session's account's rows, so another account's key id reads an empty list.
  router.get('/v1/dashboard/refusals', session, async (ctx) => {
    const q = parseQuery(RefusalsParams, ctx.query);
    const answer = await status({
      v: 1,
      op: 'refusals',
      account_id: ctx.state.session.account_id,
      key_id: q.key_id,
      limit: q.limit,
    });
    ctx.body = { key_id: q.key_id, refusals: answer.refusals ?? [] };
  });

  // Topics (issue 44): the account's topics with member counts, and its last fan-outs' progress.
  router.get('/v1/dashboard/topics', session, async (ctx) => {
    const q = parseQuery(TopicsParams, ctx.query);
    const answer = await status({
      v: 1,
      op: 'topics',
      account_id: ctx.state.session.account_id,
      limit: q.limit,
      ...(q.after ? { after: q.after } : {}),
    });
    const topics = answer.topics ?? [];
    ctx.body = {
      topics,
      next_after: topics.length === q.limit ? (topics.at(-1)?.topic ?? null) : null,
    };
  });

  router.get('/v1/dashboard/topic-events', session, async (ctx) => {
    const q = parseQuery(TopicEventsParams, ctx.query);
    const answer = await status({
      v: 1,
      op: 'fanouts',
      account_id: ctx.state.session.account_id,
      limit: q.limit,
    });
    ctx.body = { events: answer.fanouts ?? [] };
  });

  router.get('/v1/dashboard/keys', session, async (ctx) => {
    const account = ctx.state.session.account_id;
    const keys = await listApiKeys(db, account);
    // Figures are a nicety here: keys are listed even while the status service is down.
    const used = await status({ v: 1, op: 'last_used', account_id: account }).catch(
      () => undefined,
    );
    ctx.body = {
      keys: keys.map((k) => ({ ...keyView(k), last_used_at: used?.last_used?.[k.id] ?? null })),
      last_used_known: used !== undefined,
    };
  });

  router.get('/v1/dashboard/connections', session, async (ctx) => {
    const account = await findAccount(db, ctx.state.session.account_id);
    if (!account)
      throw new HeraldError('not_authenticated', 'The account of this session no longer exists');
    ctx.body = await openConnections(deps.nc, account.id);
  });

  // No session: the token is the proof, printed by support (`admin account reset-token`).
  router.post('/v1/password-resets', async (ctx) => {
    const body = parseBody(ResetBody, await readJson(ctx, settings.bodyLimitBytes));
    const hash = await hashPassword(body.password, settings.scryptLogN);
    // Every login of the account ends, and the sockets of their dashboard listeners with them.
    const listeners = await useResetToken(db, body.token, hash, deps.now());
    await broadcastRevoked(deps, listeners);
    ctx.status = 204;
  });
}

/** Default of DASHBOARD_KEY_TTL_MS. */
const DEFAULT_LISTENER_TTL_MS = 3600_000;

function parseQuery<S extends z.ZodType>(schema: S, query: unknown): z.infer<S> {
  const parsed = schema.safeParse(query);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  const field = String(issue?.path[0] ?? 'query');
  throw new HeraldError('invalid_field', `${field}: ${issue?.message ?? 'invalid'}`, { field });
}
