import {
  authorizeKeyUse,
  authorizeRecipient,
  authorizeScope,
  type KeyVerifier,
} from '@herald/access';
import type { NatsLink } from '@herald/kit';
import {
  HeraldError,
  INBOX_MAX_PAGE,
  InboxHistoryBody,
  InboxReadBody,
  type VerifiedKey,
} from '@herald/proto';
import { InboxClient } from '@herald/status-client';
import type { Context, Middleware } from 'koa';
import type { NatsConnection } from 'nats';
import type { z } from 'zod';
import { checkJsonRequest, parseJsonBody, readJsonBody } from './http-body.js';

const INBOX_BODY_EXAMPLE = '{"api_key": "...", "recipient": "<uuid>", ...}';

import { refuseWhileDown } from './nats-outage.js';

export interface InboxRouteOptions {
  nc: NatsConnection;
  link?: NatsLink | undefined;
  verifier: Pick<KeyVerifier, 'verify'>;
  /** INBOX_TIMEOUT_MS: how long the inbox store may take to answer. */
  timeoutMs: number;
  /** Epoch ms. */
  now: () => number;
}

/** Room for a key, a recipient, a cursor and INBOX_MAX_READ_IDS ids of 64 characters. */
const BODY_LIMIT_BYTES = 16 * 1024;

/**
 * `POST /inbox/history` and `POST /inbox/read` (issue 32): a server reads and marks one
 * recipient's inbox with a dispatch key (scope dispatch or both), checked as `/notify` checks it
 * (expiry, plan, client and a web key's Origin, the dashboard's reserved recipient); a key that
 * requires recipient tokens is refused, as it carries none here. The account
 * is the key's, never the body's: another account's key reads its own (empty) inbox, never this
 * one. A key without inbox mode is refused 403 `inbox_disabled`. Refusals are the plain error
 * shape `{"error":{...}}`, as `/events/status` answers.
 */
export function inboxRoutes(opts: InboxRouteOptions): { history: Middleware; read: Middleware } {
  const inbox = new InboxClient(opts.nc);
  const history = route(opts, InboxHistoryBody, async (key, body) => {
    const answer = await inbox.query(
      key.account_id,
      {
        v: 1,
        op: 'history',
        recipient: body.recipient,
        before: body.before ?? null,
        limit: body.limit ?? INBOX_MAX_PAGE,
      },
      opts.timeoutMs,
    );
    return { events: answer.events ?? [], next: answer.next ?? null };
  });
  const read = route(opts, InboxReadBody, async (key, body) => {
    if ((body.ids === undefined) === (body.all === undefined)) {
      throw new HeraldError(
        'invalid_field',
        'name the events to mark read: "ids": ["<event id>", ...] or "all": true (one of them)',
        { field: 'ids' },
      );
    }
    const answer = await inbox.query(
      key.account_id,
      {
        v: 1,
        op: 'read',
        recipient: body.recipient,
        ...(body.ids ? { ids: body.ids } : { all: true as const }),
      },
      opts.timeoutMs,
    );
    return { unread: answer.unread ?? 0 };
  });
  return { history, read };
}

function route<
  S extends z.ZodType<{ api_key: string; client?: string | undefined; recipient: string }>,
>(
  opts: InboxRouteOptions,
  schema: S,
  run: (key: VerifiedKey, body: z.infer<S>) => Promise<unknown>,
): Middleware {
  return async (ctx: Context) => {
    try {
      checkJsonRequest(
        ctx.get('Content-Type') || undefined,
        ctx.get('Content-Encoding') || undefined,
      );
      const raw = new TextDecoder().decode(await readJsonBody(ctx.req, BODY_LIMIT_BYTES));
      const body = parseJsonBody(schema, raw, INBOX_BODY_EXAMPLE);
      refuseWhileDown(opts.link, 'the inbox could not be read');
      const key = await opts.verifier.verify(body.api_key);
      authorizeKeyUse(key, {
        client: (body.client ?? key.client) as VerifiedKey['client'],
        origin: ctx.get('Origin') || undefined,
        now: opts.now(),
      });
      authorizeRecipient(key, body.recipient, 'http');
      authorizeScope(key, 'dispatch');
      // A key that requires recipient tokens is held by browsers and apps (web inbox keys by
      // default): with it and a user's id alone, this route would read what its sockets guard.
      if (key.require_token === true) {
        throw new HeraldError(
          'scope_denied',
          'This api_key requires recipient tokens, and /inbox/* takes none: its holders read the inbox over their socket (with a token); your server reads it with a key that does not require tokens (a mobile key with scope dispatch)',
          { field: 'api_key' },
        );
      }
      if (!key.inbox_days) {
        throw new HeraldError(
          'inbox_disabled',
          "This api_key is not in inbox mode, so Herald keeps no history for it: create a key with --inbox-days N (or the dashboard's inbox option) and send with it",
          { field: 'api_key' },
        );
      }
      ctx.body = await run(key, body);
    } catch (err) {
      if (!(err instanceof HeraldError)) throw err;
      ctx.status = err.status;
      ctx.body = err.toBody();
      if (err.retryAfter !== undefined) ctx.set('Retry-After', String(err.retryAfter));
    }
  };
}
