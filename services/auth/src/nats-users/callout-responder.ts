import type { Logger } from '@herald/kit';
import { AUTH_CALLOUT_SUBJECT, backendPermissions, queueGroups } from '@herald/proto';
import type { Kysely } from 'kysely';
import type { Msg, NatsConnection } from 'nats';
import { fromSeed } from 'nkeys.js';
import { z } from 'zod';
import type { AuthDb } from '../db-schema.js';
import { decodeNatsJwt, encodeNatsJwt } from './nats-jwt.js';
import { natsUserAccount } from './store.js';

/** What Herald reads of nats-server's authorization request (the rest is ignored). */
const AuthRequest = z.object({
  nats: z.object({
    server_id: z.object({ id: z.string().min(1) }),
    user_nkey: z.string().startsWith('U'),
    connect_opts: z.object({ user: z.string().optional(), pass: z.string().optional() }),
    type: z.literal('authorization_request'),
  }),
});

/** How long an issued user JWT is valid for its connection (the server closes it then). */
const USER_JWT_TTL_S = 24 * 3600;

export interface CalloutResponder {
  drain(): Promise<void>;
}

/**
 * Answers nats-server's auth callout (`$SYS.REQ.USER.AUTH`): a customer backend's user and
 * password, checked against `nats_users`, get a user JWT that allows only that account's dispatch
 * subjects (proto's backendPermissions), signed with the callout key (NATS_CALLOUT_SEED). Anything
 * else gets an empty answer, which nats-server takes as a refusal. Passwords are never logged;
 * nor is the user name (it says nothing of the account to a reader of the logs).
 */
export function startCalloutResponder(deps: {
  nc: NatsConnection;
  db: Kysely<AuthDb>;
  seed: string;
  logger: Logger;
}): CalloutResponder {
  const signer = fromSeed(new TextEncoder().encode(deps.seed));
  const inflight = new Set<Promise<void>>();
  const answer = async (msg: Msg): Promise<Uint8Array> => {
    const claims = decodeNatsJwt(new TextDecoder().decode(msg.data));
    const request = AuthRequest.safeParse(claims);
    if (!request.success) return new Uint8Array();
    const { server_id, user_nkey, connect_opts } = request.data.nats;
    const account = await natsUserAccount(
      deps.db,
      connect_opts.user ?? '',
      connect_opts.pass ?? '',
    );
    if (!account) return new Uint8Array();
    const p = backendPermissions(account);
    const now = Math.floor(Date.now() / 1000);
    const user = encodeNatsJwt(
      {
        sub: user_nkey,
        // The account the user lands in: the global one, where Herald's subjects live.
        aud: '$G',
        name: connect_opts.user,
        exp: now + USER_JWT_TTL_S,
        nats: {
          pub: { allow: p.publish.allow },
          sub: { allow: p.subscribe.allow },
          subs: -1,
          data: -1,
          payload: -1,
          type: 'user',
          version: 2,
        },
      },
      signer,
    );
    const response = encodeNatsJwt(
      {
        sub: user_nkey,
        aud: server_id.id,
        nats: { jwt: user, type: 'authorization_response', version: 2 },
      },
      signer,
    );
    return new TextEncoder().encode(response);
  };
  // One auth instance answers each connect.
  const sub = deps.nc.subscribe(AUTH_CALLOUT_SUBJECT, {
    queue: queueGroups.auth,
    callback: (_err, msg) => {
      const done = answer(msg)
        .catch((err: unknown) => {
          deps.logger.error({ err: String(err) }, 'auth callout failed: the connection is refused');
          return new Uint8Array();
        })
        .then((reply) => {
          msg.respond(reply);
        })
        .finally(() => inflight.delete(done));
      inflight.add(done);
    },
  });
  return {
    async drain() {
      await sub.drain();
      await Promise.allSettled([...inflight]);
    },
  };
}
