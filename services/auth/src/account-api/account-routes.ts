import { HeraldError } from '@herald/proto';
import type Router from '@koa/router';
import { createAccount, findAccount } from '../accounts.js';
import { iso } from '../dates.js';
import { broadcastRevoked } from '../invalidation.js';
import { dropSessionListeners } from '../keys/dashboard-keys.js';
import { countActiveKeys } from '../keys/store.js';
import { findPlan } from '../plan-catalogue.js';
import { liveKeyStanding } from '../subscriptions.js';
import { clearedSessionCookie, sessionCookie } from './cookies.js';
import type { AccountApiDeps } from './deps.js';
import { parseBody, readJson } from './json-body.js';
import { hashPassword, verifyPassword } from './passwords.js';
import { LoginBody, SignupBody } from './schemas.js';
import { requireSession, type SessionState } from './session-auth.js';
import { createSession, deleteSession } from './sessions.js';

const BAD_CREDENTIALS =
  'email or password is wrong: check both, or create an account with POST /v1/accounts';

/** Signup, login, logout and the account's plan: `/v1/accounts`, `/v1/sessions`, `/v1/account`. */
export function accountRoutes(router: Router<SessionState>, deps: AccountApiDeps): void {
  const { db, settings } = deps;
  const session = requireSession(db, deps.now);
  // An unknown email is checked against this hash, so it costs what a wrong password costs and
  // timing does not tell which addresses have accounts. Made now, not at the first unknown email,
  // whose answer would otherwise take twice as long.
  const dummyHash = hashPassword('herald-dummy-password', settings.scryptLogN);
  dummyHash.catch(() => {});

  router.post('/v1/accounts', async (ctx) => {
    const body = parseBody(SignupBody, await readJson(ctx, settings.bodyLimitBytes));
    const password_hash = await hashPassword(body.password, settings.scryptLogN);
    const account = await createAccount(db, { email: body.email, password_hash });
    ctx.status = 201;
    ctx.body = {
      id: account.id,
      email: account.email,
      plan: account.plan,
      period_end: iso(account.period_end),
      created_at: iso(account.created_at),
    };
  });

  router.post('/v1/sessions', async (ctx) => {
    const body = parseBody(LoginBody, await readJson(ctx, settings.bodyLimitBytes));
    const limitKey = `${body.email}|${ctx.ip}`;
    const wait = deps.limiter.retryAfter(limitKey);
    if (wait !== undefined) {
      deps.metrics?.logins.inc({ result: 'rate_limited' });
      throw new HeraldError(
        'rate_limited',
        `Too many failed logins for this email from this address: wait ${wait} s (see Retry-After), or reset the password`,
        { field: 'email', retryAfter: wait },
      );
    }
    const account = await db
      .selectFrom('accounts')
      .select(['id', 'password_hash'])
      .where('email', '=', body.email)
      .executeTakeFirst();
    const stored = account?.password_hash ?? null;
    const matches = await verifyPassword(body.password, stored ?? (await dummyHash));
    if (!account || stored === null || !matches) {
      deps.limiter.failed(limitKey);
      deps.metrics?.logins.inc({ result: 'invalid_credentials' });
      // No field: naming email or password would say which one was wrong.
      throw new HeraldError('invalid_credentials', BAD_CREDENTIALS);
    }
    deps.limiter.succeeded(limitKey);
    deps.metrics?.logins.inc({ result: 'ok' });
    const opened = await createSession(db, account.id, settings.sessionTtlMs, deps.now());
    ctx.set('Set-Cookie', sessionCookie(opened.token, settings.sessionTtlMs));
    ctx.status = 201;
    ctx.body = {
      account_id: account.id,
      csrf: opened.csrf,
      expires_at: opened.expires_at.toISOString(),
    };
  });

  router.delete('/v1/sessions/current', session, async (ctx) => {
    // The login's dashboard listeners end with it: their sockets are closed at once.
    const listeners = await dropSessionListeners(db, ctx.state.session.id);
    await deleteSession(db, ctx.state.session.id);
    await broadcastRevoked(deps, listeners);
    ctx.set('Set-Cookie', clearedSessionCookie());
    ctx.status = 204;
  });

  router.get('/v1/account', session, async (ctx) => {
    const accountId = ctx.state.session.account_id;
    const [account, keys] = await Promise.all([
      findAccount(db, accountId),
      countActiveKeys(db, accountId),
    ]);
    if (!account) {
      throw new HeraldError('not_authenticated', 'The account of this session no longer exists');
    }
    const plan = findPlan(deps.catalogue, account.plan);
    const standing = liveKeyStanding(
      deps.catalogue,
      { plan: account.plan, period_end: account.period_end },
      deps.now(),
    );
    ctx.body = {
      id: account.id,
      email: account.email,
      created_at: iso(account.created_at),
      plan: { id: account.plan, name: plan?.name ?? account.plan, paid: plan?.paid ?? false },
      // free: never lapses, no Live keys; active: paid and in period; lapsed: paid, period over.
      status: !plan?.paid ? 'free' : standing.active ? 'active' : 'lapsed',
      period_end: iso(account.period_end),
      limits: plan?.limits ?? null,
      test_key_limits: deps.catalogue.test_key_limits,
      keys: { live: keys.live, test: keys.test },
    };
  });
}
