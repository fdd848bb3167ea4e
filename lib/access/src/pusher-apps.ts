import type { Logger } from '@herald/kit';
import { NatsRequester, type NoAnswer } from '@herald/nats';
import {
  type AuthInvalidate,
  PUSHER_APP_ID,
  PUSHER_APP_SUBJECT,
  type PusherApp,
  PusherAppReply,
  type VerifiedKey,
} from '@herald/proto';
import type { NatsConnection, Subscription } from 'nats';
import { type Answer, AnswerCache } from './answer-cache.js';
import { authErrorOf, subscribeInvalidations } from './auth-answers.js';

export interface PusherAppVerifierOptions {
  /** How long a found app is reused, ms (an invalidation drops it at once). Default 5000. */
  ttlMs?: number;
  /** How long an unknown app or a refused bound key is reused, ms. Default 5000. */
  negativeTtlMs?: number;
  /** Most cached apps, and apart from them most cached refusals. Default 10000 each. */
  maxEntries?: number;
  /** How long to wait for the auth service, ms. Default 2000. */
  timeoutMs?: number;
}

/** A Pusher app with its bound key, as auth verified it. */
export interface VerifiedPusherApp {
  app: PusherApp;
  key: VerifiedKey;
}

/** How an app is looked up: by its id (the HTTP API) or its key (the socket). */
export type PusherAppRef = { app_id: string } | { key: string };

const AUTH_UNAVAILABLE: NoAnswer = {
  message: 'Pusher app lookup is temporarily unavailable: retry shortly',
};

/**
 * Looks Pusher apps up through auth (`rt.auth.pusher`, issue 41), cached like the `KeyVerifier`'s
 * keys (same `AnswerCache`): a found app for `ttlMs`, an unknown app or a refused bound key for
 * `negativeTtlMs`. An `rt.auth.invalidate` naming the bound key or its account drops the app at
 * once; one with reason `pusher_app` (an app created, deleted or given a new secret) also forgets
 * every cached refusal, so a new app answers at once.
 */
export class PusherAppVerifier {
  readonly #requester: NatsRequester;
  readonly #timeoutMs: number;
  readonly #cache: AnswerCache<VerifiedPusherApp>;
  readonly #sub: Subscription;
  readonly #logger: Logger;

  constructor(nc: NatsConnection, logger: Logger, opts: PusherAppVerifierOptions = {}) {
    this.#requester = new NatsRequester(nc);
    this.#logger = logger;
    this.#timeoutMs = opts.timeoutMs ?? 2000;
    const maxEntries = opts.maxEntries ?? 10_000;
    this.#cache = new AnswerCache((ref) => this.#ask(ref), {
      ttlMs: opts.ttlMs ?? 5000,
      maxEntries,
      negativeTtlMs: opts.negativeTtlMs ?? 5000,
      maxNegativeEntries: maxEntries,
    });
    this.#sub = subscribeInvalidations(nc, logger, (msg) => this.invalidate(msg));
  }

  /**
   * The app and its bound key, or a HeraldError: `invalid_api_key` for an unknown app, the bound
   * key's refusal (`key_revoked`, `plan_inactive`, …), or 503 `unavailable`.
   */
  async lookup(ref: PusherAppRef): Promise<VerifiedPusherApp> {
    const answer = await this.#cache.get('app_id' in ref ? `id:${ref.app_id}` : `key:${ref.key}`);
    if (answer.ok) return answer.value;
    throw answer.error;
  }

  /**
   * {@link lookup} of an app by id while its answer is cached, with no promise (the HTTP API's
   * every request after the first); undefined when only `lookup` can answer. A cached refusal
   * throws, as `lookup` rejects.
   */
  cachedById(appId: string): VerifiedPusherApp | undefined {
    const answer = this.#cache.peek(`id:${appId}`);
    if (answer === undefined || answer.ok) return answer?.value;
    throw answer.error;
  }

  invalidate(msg: AuthInvalidate): void {
    this.#cache.invalidate(
      ({ key }) =>
        (msg.key_id !== undefined && key.id === msg.key_id) ||
        (msg.account_id !== undefined && key.account_id === msg.account_id),
      msg.reason === 'pusher_app' || msg.reason === 'plan_changed' ? () => true : undefined,
    );
  }

  /** Cached lookups, found and refused. */
  get size(): number {
    return this.#cache.size;
  }

  close(): void {
    this.#sub.unsubscribe();
    this.#cache.clear();
  }

  async #ask(ref: string): Promise<Answer<VerifiedPusherApp> & { cache?: false }> {
    const byId = ref.startsWith('id:');
    const value = ref.slice(byId ? 'id:'.length : 'key:'.length);
    const field = byId ? 'app_id' : 'key';
    try {
      const reply = await this.#requester.requestJson(
        PUSHER_APP_SUBJECT,
        byId ? { v: 1, app_id: value } : { v: 1, key: value },
        PusherAppReply,
        this.#timeoutMs,
        AUTH_UNAVAILABLE,
      );
      // Auth answers for the app asked about; anything else is not trusted with a tenant.
      const asked = byId ? reply.app.app_id === value : reply.app.key === value;
      if (!asked || !PUSHER_APP_ID.test(reply.app.app_id)) {
        this.#logger.error({ ref }, 'auth answered a Pusher lookup with another app');
        return authErrorOf(
          new Error('mismatched app'),
          this.#logger,
          AUTH_UNAVAILABLE.message,
          'Pusher app lookup',
          field,
        );
      }
      return { ok: true, value: { app: reply.app, key: reply.key } };
    } catch (err) {
      return authErrorOf(err, this.#logger, AUTH_UNAVAILABLE.message, 'Pusher app lookup', field);
    }
  }
}
