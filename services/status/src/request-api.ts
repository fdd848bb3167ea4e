import type { Logger } from '@herald/kit';
import { errorReply, HeraldError, queueGroups } from '@herald/proto';
import type { Msg, NatsConnection, Subscription } from 'nats';
import type { z } from 'zod';

export interface RequestApi<Q> {
  nc: NatsConnection;
  logger: Logger;
  subject: string;
  /** The request's zod schema (proto's *Request); a request it refuses is `invalid_field`. */
  schema: z.ZodType<Q>;
  /** What the store is called in messages: "webhook", "push". */
  what: string;
  /** Answers one parsed request; a HeraldError thrown is the refusal the caller sees. */
  run(request: Q): Promise<Record<string, unknown>>;
}

/**
 * Answers one of the status service's management subjects (webhook endpoints, push credentials
 * and subscriptions) in the status queue group: a request parsed with its proto schema (the first
 * problem named by field), `{v:1, ok:true, ...}` or proto's ErrorReply, and any failure that is
 * not a refusal logged and answered `unavailable`, so a caller never waits for its timeout.
 */
export function serveRequests<Q>(api: RequestApi<Q>): Subscription {
  return api.nc.subscribe(api.subject, {
    queue: queueGroups.status,
    callback: (err, msg) => {
      if (!err) void answer(api, msg);
    },
  });
}

async function answer<Q>(api: RequestApi<Q>, msg: Msg): Promise<void> {
  let reply: unknown;
  try {
    reply = { v: 1, ok: true, ...(await api.run(parse(api, msg))) };
  } catch (err) {
    if (err instanceof HeraldError) {
      reply = errorReply(err);
    } else {
      api.logger.error({ err: String(err) }, `${api.what} request failed`);
      reply = errorReply(
        new HeraldError('unavailable', `The ${api.what} store is unavailable: retry shortly`),
      );
    }
  }
  if (msg.reply) msg.respond(JSON.stringify(reply));
}

function parse<Q>(api: RequestApi<Q>, msg: Msg): Q {
  let body: unknown;
  try {
    body = JSON.parse(new TextDecoder().decode(msg.data));
  } catch {
    body = undefined;
  }
  const parsed = api.schema.safeParse(body);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  const field = issue?.path.join('.') || undefined;
  throw new HeraldError(
    'invalid_field',
    `${field ? `${field}: ` : ''}${issue?.message ?? `not a ${api.what} request`}`,
    field ? { field } : {},
  );
}
