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

type Outcome = { ok: true; grant: AppGrant } | { ok: false; error: HeraldError };

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
 * Looks Pusher apps up by key with auth (`rt.auth.pusher`, `{v:1,key}`), with the key verifier's
 * cache rules: a found app is reused for the TTL, a refusal (unknown app, refused bound key) for
 * the negative TTL in a map of its own (a flood of bad keys cannot evict good ones), one request
 * per key in flight, no answer (auth down) never cached, and an answer asked for before an
 * invalidation never cached after it. An invalidation (`rt.auth.invalidate`, heard through the
 * edge's KeyVerifier: `pusher_app` when an app of a key was made, deleted or given a new secret,
 * or any change of the bound key or its account) drops the apps of that key or account, and a
 * plan change every cached refusal.
 */
export class AppLookup {
  readonly #requester: NatsRequester;
  readonly #opts: Required<AppLookupOptions>;
  readonly #logger: Logger;
  readonly #found = new Map<string, { outcome: Outcome; until: number }>();
  readonly #refused = new Map<string, { outcome: Outcome; until: number }>();
  readonly #inflight = new Map<string, Promise<Outcome>>();
  #generation = 0;

  constructor(nc: NatsConnection, logger: Logger, opts: AppLookupOptions) {
    this.#requester = new NatsRequester(nc);
    this.#logger = logger;
    this.#opts = { maxEntries: 10_000, ...opts };
  }

  /** The app of this key and its bound key; rejects with the HeraldError (`invalid_api_key` for no app). */
  async byKey(appKey: string): Promise<AppGrant> {
    if (!PUSHER_APP_KEY.test(appKey)) throw invalidApiKey();
    const cached = this.#found.get(appKey) ?? this.#refused.get(appKey);
    const outcome =
      cached && cached.until > Date.now()
        ? cached.outcome
        : await (this.#inflight.get(appKey) ?? this.#ask(appKey));
    if (outcome.ok) return outcome.grant;
    throw outcome.error;
  }

  /** Drops what an invalidation concerns. */
  invalidate(msg: AuthInvalidate): void {
    this.#generation++;
    for (const [appKey, { outcome }] of this.#found) {
      if (!outcome.ok) continue;
      const { app } = outcome.grant;
      if (
        (msg.key_id && app.key_id === msg.key_id) ||
        (msg.account_id && app.account_id === msg.account_id)
      ) {
        this.#found.delete(appKey);
      }
    }
    // A refusal names no key (an app made for a key that had none is refused until then).
    if (msg.reason === 'plan_changed' || msg.reason === 'pusher_app') this.#refused.clear();
  }

  get size(): number {
    return this.#found.size + this.#refused.size;
  }

  #ask(appKey: string): Promise<Outcome> {
    const pending = this.#request(appKey).finally(() => this.#inflight.delete(appKey));
    this.#inflight.set(appKey, pending);
    return pending;
  }

  async #request(appKey: string): Promise<Outcome> {
    const generation = this.#generation;
    let outcome: Outcome;
    try {
      const reply = await this.#requester.requestJson(
        PUSHER_APP_SUBJECT,
        { v: 1, key: appKey },
        PusherAppReply,
        this.#opts.timeoutMs,
        AUTH_UNAVAILABLE,
      );
      outcome = { ok: true, grant: { app: reply.app, key: reply.key } };
    } catch (err) {
      if (!(err instanceof HeraldError) || err.code === 'unavailable' || err.code === 'internal') {
        this.#logger.error(
          { err: String(err instanceof HeraldError ? (err.cause ?? err.message) : err) },
          'Pusher app lookup failed: auth unavailable',
        );
        return {
          ok: false,
          error: new HeraldError('unavailable', AUTH_UNAVAILABLE.message, { cause: err }),
        };
      }
      outcome = { ok: false, error: new HeraldError(err.code, err.message) };
    }
    if (generation === this.#generation) this.#remember(appKey, outcome);
    return outcome;
  }

  #remember(appKey: string, outcome: Outcome): void {
    const [cache, ttl] = outcome.ok
      ? [this.#found, this.#opts.ttlMs]
      : [this.#refused, this.#opts.negativeTtlMs];
    this.#found.delete(appKey);
    this.#refused.delete(appKey);
    cache.set(appKey, { outcome, until: Date.now() + ttl });
    while (cache.size > this.#opts.maxEntries) {
      const oldest = cache.keys().next().value;
      if (oldest === undefined) break;
      cache.delete(oldest);
    }
  }
}
