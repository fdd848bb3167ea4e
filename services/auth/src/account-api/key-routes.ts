import type { AuthInvalidate } from '@herald/proto';
import type Router from '@koa/router';
import {
  domainChangedMessage,
  publishInvalidation,
  revokedMessage,
  secretRotatedMessage,
  tokenRequiredMessage,
} from '../invalidation.js';
import { normalizeDomain } from '../keys/domain.js';
import { issueKey } from '../keys/issuing.js';
import {
  DEFAULT_SECRET_OVERLAP_MS,
  requireTokens,
  rotateSigningSecret,
} from '../keys/signing-secrets.js';
import {
  findApiKey,
  listApiKeys,
  revokeApiKey,
  setApiKeyDomain,
  setApiKeyName,
} from '../keys/store.js';
import { createdKeyView, keyView, rotatedView, tokensOnView } from '../keys/views.js';
import type { AccountApiDeps } from './deps.js';
import { parseBody, readJson } from './json-body.js';
import { DomainBody, LiveKeyBody, NameBody, TestKeyBody } from './schemas.js';
import { requireSession, type SessionState } from './session-auth.js';

/** The account's keys: list, create Live, generate Test, revoke, tokens and secrets, domain. */
export function keyRoutes(router: Router<SessionState>, deps: AccountApiDeps): void {
  const { db, settings } = deps;
  const session = requireSession(db, deps.now);
  const rules = {
    db,
    catalogue: deps.catalogue,
    maxLiveKeys: settings.maxLiveKeys,
    box: settings.box,
  };

  /**
   * The database already holds the change; the broadcast only cuts cached answers short. If NATS
   * is down, callers' caches expire within their TTL, so the request still succeeds, logged.
   */
  const broadcast = async (msg: AuthInvalidate) => {
    try {
      await publishInvalidation(deps.nc, msg);
    } catch (err) {
      deps.logger.error(
        { err: err instanceof Error ? err.message : String(err), reason: msg.reason },
        'invalidation broadcast failed: caches will catch up within their TTL',
      );
    }
  };

  router.get('/v1/keys', session, async (ctx) => {
    const keys = await listApiKeys(db, ctx.state.session.account_id);
    ctx.body = { keys: keys.map(keyView) };
  });

  // Live keys (several, on a paid plan) and the account's one Test key: same body, same answer.
  for (const [path, kind, schema] of [
    ['/v1/keys', 'live', LiveKeyBody],
    ['/v1/keys/test', 'test', TestKeyBody],
  ] as const) {
    router.post(path, session, async (ctx) => {
      const body = parseBody(schema, await readJson(ctx, settings.bodyLimitBytes));
      const key = await issueKey(
        rules,
        ctx.state.session.account_id,
        {
          kind,
          client: body.client,
          domain: body.domain,
          scope: body.scope,
          require_token: body.require_token,
          allow_unsigned_recipients: body.allow_unsigned_recipients,
          inbox_days: body.inbox_days,
          webhook_payload: body.webhook_payload,
          name: body.name,
          push_after_ms: body.push_after_ms,
          push_ttl_s: body.push_ttl_s,
          push_title: body.push_title,
          push_body: body.push_body,
          push_include_payload: body.push_include_payload,
        },
        new Date(deps.now()),
      );
      ctx.status = 201;
      ctx.body = createdKeyView(key);
    });
  }

  router.delete('/v1/keys/:id', session, async (ctx) => {
    const key = await revokeApiKey(db, ctx.params.id ?? '', ctx.state.session.account_id);
    await broadcast(revokedMessage(key));
    ctx.body = keyView(key);
  });

  // A new signing secret, shown once; the replaced one stays valid for the overlap.
  router.post('/v1/keys/:id/signing-secret', session, async (ctx) => {
    const accountId = ctx.state.session.account_id;
    const rotated = await rotateSigningSecret(
      db,
      settings.box,
      ctx.params.id ?? '',
      settings.secretOverlapMs ?? DEFAULT_SECRET_OVERLAP_MS,
      new Date(deps.now()),
      accountId,
    );
    await broadcast(secretRotatedMessage(rotated.key));
    ctx.body = rotatedView(rotated);
  });

  // Tokens on for an existing key: its first signing secret, shown once; the edges then close
  // its sockets that opened without a token.
  router.post('/v1/keys/:id/require-token', session, async (ctx) => {
    const accountId = ctx.state.session.account_id;
    const turnedOn = await requireTokens(db, settings.box, ctx.params.id ?? '', accountId);
    await broadcast(tokenRequiredMessage(turnedOn.key));
    ctx.body = tokensOnView(turnedOn);
  });

  // A label only: nothing verifies a name, so no cache needs telling.
  router.put('/v1/keys/:id/name', session, async (ctx) => {
    const body = parseBody(NameBody, await readJson(ctx, settings.bodyLimitBytes));
    const key = await setApiKeyName(
      db,
      ctx.params.id ?? '',
      body.name,
      ctx.state.session.account_id,
    );
    ctx.body = keyView(key);
  });

  router.put('/v1/keys/:id/domain', session, async (ctx) => {
    const body = parseBody(DomainBody, await readJson(ctx, settings.bodyLimitBytes));
    const accountId = ctx.state.session.account_id;
    const current = await findApiKey(db, accountId, ctx.params.id ?? '');
    const domain = normalizeDomain(body.domain, current.kind);
    const key = await setApiKeyDomain(db, accountId, current.id, domain);
    await broadcast(domainChangedMessage(key));
    ctx.body = keyView(key);
  });
}
