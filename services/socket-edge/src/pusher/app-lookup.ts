import { type Verdict, VerdictCache } from '@herald/access';
import type { Logger } from '@herald/kit';
import { NatsRequester, type NoAnswer } from '@herald/nats';
import {
  type AuthInvalidate,
  HeraldError,
  invalidApiKey,
  PUSHER_APP_KEY,
  PUSHER_APP_SUBJECT,
  type PusherApp,
  PusherAppReply,
  type VerifiedKey,
} from '@herald/proto';
import type { NatsConnection } from 'nats';

/** An app and its bound key, verified as `rt.auth.verify` would. */
export interface AppGrant {
  app: PusherApp;
  key: VerifiedKey;
}

export interface AppLookupOptions {
  /** How long a found app is reused, ms (KEY_CACHE_TTL_MS). */
  ttlMs: number;
  /** How long a refusal is reused, ms (KEY_NEGATIVE_CACHE_TTL_MS). */
  negativeTtlMs: number;
  /** How long to wait for auth, ms (AUTH_TIMEOUT_MS). */
  timeoutMs: number;
  /** Most cached answers, each way; the oldest goes first. Default 10000. */
  maxEntries?: number;
}

const AUTH_UNAVAILABLE: NoAnswer = {
  message: 'The Pusher app lookup is temporarily unavailable: retry shortly',
};

/**
 * Looks Pusher apps up by key with auth (`rt.auth.pusher`, `{v:1,key}`), cached by lib/access's
 * {@link VerdictCache} exactly as the key verifier caches keys (TTL with refresh ahead, refusals
 * apart, one request per key in flight, an outage never cached). An invalidation
 * (`rt.auth.invalidate`, heard through the edge's KeyVerifier: `pusher_app` when an app of a key
 * was made, deleted or given a new secret, or any change of the bound key or its account) drops
 * the apps of that key or account; `pusher_app` and a plan change drop every cached refusal too
 * (a refusal names no key).
 */
export class AppLookup {
  readonly #requester: NatsRequester;
  readonly #timeoutMs: number;
  readonly #logger: Logger;
  readonly #verdicts: VerdictCache<AppGrant>;

  constructor(nc: NatsConnection, logger: Logger, opts: AppLookupOptions) {
    this.#requester = new NatsRequester(nc);
    this.#logger = logger;
    this.#timeoutMs = opts.timeoutMs;
    const max = opts.maxEntries ?? 10_000;
    this.#verdicts = new VerdictCache((appKey) => this.#ask(appKey), {
      ttlMs: opts.ttlMs,
      negativeTtlMs: opts.negativeTtlMs,
      maxEntries: max,
      maxNegativeEntries: max,
    });
  }

  /** The app of this key and its bound key; rejects with the HeraldError (`invalid_api_key` for no app). */
  byKey(appKey: string): Promise<AppGrant> {
    if (!PUSHER_APP_KEY.test(appKey)) return Promise.reject(invalidApiKey());
    return this.#verdicts.get(appKey);
  }

  /** Drops what an invalidation concerns. */
  invalidate(msg: AuthInvalidate): void {
    this.#verdicts.forget(
      ({ app }) =>
        Boolean(
          (msg.key_id && app.key_id === msg.key_id) ||
            (msg.account_id && app.account_id === msg.account_id),
        ),
      msg.reason === 'plan_changed' || msg.reason === 'pusher_app' ? () => true : undefined,
    );
  }

  get size(): number {
    return this.#verdicts.size;
  }

  async #ask(appKey: string): Promise<{ verdict: Verdict<AppGrant>; cache: boolean }> {
    try {
      const reply = await this.#requester.requestJson(
        PUSHER_APP_SUBJECT,
        { v: 1, key: appKey },
        PusherAppReply,
        this.#timeoutMs,
        AUTH_UNAVAILABLE,
      );
      return { verdict: { ok: true, value: { app: reply.app, key: reply.key } }, cache: true };
    } catch (err) {
      if (!(err instanceof HeraldError) || err.code === 'unavailable' || err.code === 'internal') {
        this.#logger.error(
          { err: String(err instanceof HeraldError ? (err.cause ?? err.message) : err) },
          'Pusher app lookup failed: auth unavailable',
        );
        const error = new HeraldError('unavailable', AUTH_UNAVAILABLE.message, { cause: err });
        return { verdict: { ok: false, error }, cache: false };
      }
      return { verdict: { ok: false, error: new HeraldError(err.code, err.message) }, cache: true };
    }
  }
}
