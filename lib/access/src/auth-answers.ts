import type { Logger } from '@herald/kit';
import { AuthInvalidate, HeraldError, subjects } from '@herald/proto';
import { JSONCodec, type NatsConnection, type Subscription } from 'nats';
import type { Answer } from './answer-cache.js';

const codec = JSONCodec();

/** Subscribes to auth's invalidation broadcasts (`rt.auth.invalidate`), malformed ones ignored. */
export function subscribeInvalidations(
  nc: NatsConnection,
  logger: Logger,
  onInvalidate: (msg: AuthInvalidate) => void,
): Subscription {
  return nc.subscribe(subjects.authInvalidate, {
    callback: (err, msg) => {
      if (err) return;
      const parsed = AuthInvalidate.safeParse(safeDecode(msg.data));
      if (!parsed.success) {
        logger.warn('ignoring malformed auth invalidation');
        return;
      }
      onInvalidate(parsed.data);
    },
  });
}

/**
 * A failed question to auth as an answer: auth's refusal, with its code and `field` at fault
 * (cached); no answer (auth absent, slow or failing inside) is 503 `unavailable`, logged and not
 * cached, so the next use asks again.
 */
export function authErrorOf(
  err: unknown,
  logger: Logger,
  unavailable: string,
  what: string,
  field: string,
): { ok: false; error: HeraldError; cache?: false } {
  if (!(err instanceof HeraldError) || err.code === 'unavailable') {
    logger.error(
      { err: String(err instanceof HeraldError ? err.cause : err) },
      `${what} failed: auth unavailable`,
    );
    const error =
      err instanceof HeraldError
        ? err
        : new HeraldError('unavailable', unavailable, { cause: err });
    return { ok: false, error, cache: false };
  }
  return { ok: false, error: new HeraldError(err.code, err.message, { field }) };
}

function safeDecode(data: Uint8Array): unknown {
  try {
    return codec.decode(data);
  } catch {
    return undefined;
  }
}

export type { Answer };
