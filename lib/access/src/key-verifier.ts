import type { Logger } from '@herald/kit';
import { NatsRequester, type NoAnswer } from '@herald/nats';
import {
  type AuthInvalidate,
  AuthVerifyReply,
  invalidApiKey,
  isWellFormedApiKey,
  subjects,
  type VerifiedKey,
} from '@herald/proto';
import type { NatsConnection, Subscription } from 'nats';
import { type Answer, AnswerCache } from './answer-cache.js';
import { authErrorOf, subscribeInvalidations } from './auth-answers.js';
import { hashKey } from './key-hash.js';

export interface KeyVerifierOptions {
  /** How long a key's successful verification is reused, ms. Default 5000. */
  ttlMs?: number;
  /** Most cached successful verifications; the oldest is evicted first. Default 10000. */
  maxEntries?: number;
  /** How long a refusal (unknown, revoked, expired key) is reused, ms. Default 5000. */
  negativeTtlMs?: number;
  /**
   * Most cached refusals, kept apart from the successes so a flood of bad keys cannot evict the
   * valid ones; the oldest is evicted first. Default 10000.
   */
  maxNegativeEntries?: number;
  /** How long to wait for the auth service, ms. Default 2000. */
  timeoutMs?: number;
  /**
   * Ask auth for the signing secrets of keys that require recipient tokens (the edge, which
   * verifies tokens). Default false: a caller that never checks tokens never holds a secret.
   */
  withSigningSecrets?: boolean;
}

/** What a caller is told while auth does not answer (HeraldError `unavailable`). */
const AUTH_UNAVAILABLE: NoAnswer = {
  message: 'Key verification is temporarily unavailable: retry shortly',
};

/**
 * Verifies API keys through the auth service (`rt.auth.verify`), caching each answer briefly and
 * dropping cached answers the moment auth broadcasts an invalidation (revocation, reset, plan
 * change). Only the key's SHA-256 crosses NATS. Expiry is re-checked at use by authorizeKeyUse,
 * so a cached answer never outlives the key.
 */
export class KeyVerifier {
  readonly #requester: NatsRequester;
  readonly #timeoutMs: number;
  readonly #withSecrets: boolean;
  readonly #cache: AnswerCache<VerifiedKey>;
  readonly #listeners = new Set<(msg: AuthInvalidate) => void>();
  readonly #sub: Subscription;
  readonly #logger: Logger;

  constructor(nc: NatsConnection, logger: Logger, opts: KeyVerifierOptions = {}) {
    this.#requester = new NatsRequester(nc);
    this.#logger = logger;
    this.#timeoutMs = opts.timeoutMs ?? 2000;
    this.#withSecrets = opts.withSigningSecrets ?? false;
    this.#cache = new AnswerCache((hash) => this.#ask(hash), {
      ttlMs: opts.ttlMs ?? 5000,
      maxEntries: opts.maxEntries ?? 10_000,
      negativeTtlMs: opts.negativeTtlMs ?? 5000,
      maxNegativeEntries: opts.maxNegativeEntries ?? 10_000,
    });
    this.#sub = subscribeInvalidations(nc, logger, (msg) => this.invalidate(msg));
  }

  /**
   * Resolves with the verified key or rejects with a HeraldError (401 codes, or 503 `unavailable`).
   * A value that cannot be a key is refused here, before any hashing or lookup.
   */
  async verify(apiKey: string): Promise<VerifiedKey> {
    if (!isWellFormedApiKey(apiKey)) throw invalidApiKey();
    const answer = await this.#cache.get(hashKey(apiKey));
    if (answer.ok) return answer.value;
    throw answer.error;
  }

  /** Called with every invalidation after the cache dropped the matching entries. */
  onInvalidate(listener: (msg: AuthInvalidate) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  invalidate(msg: AuthInvalidate): void {
    // A refusal names no account, so a plan change forgets every plan refusal: a renewal then
    // takes effect at once instead of after the TTL.
    this.#cache.invalidate(
      (key) =>
        (msg.key_id !== undefined && key.id === msg.key_id) ||
        (msg.account_id !== undefined && key.account_id === msg.account_id),
      msg.reason === 'plan_changed' ? (error) => error.code === 'plan_inactive' : undefined,
    );
    for (const listener of this.#listeners) listener(msg);
  }

  /** Cached verifications, successes and refusals. */
  get size(): number {
    return this.#cache.size;
  }

  close(): void {
    this.#sub.unsubscribe();
    this.#cache.clear();
    this.#listeners.clear();
  }

  async #ask(hash: string): Promise<Answer<VerifiedKey> & { cache?: false }> {
    try {
      const reply = await this.#requester.requestJson(
        subjects.authVerify,
        this.#withSecrets
          ? { v: 1, key_hash: hash, signing_secrets: true }
          : { v: 1, key_hash: hash },
        AuthVerifyReply,
        this.#timeoutMs,
        AUTH_UNAVAILABLE,
      );
      return { ok: true, value: reply.key };
    } catch (err) {
      return authErrorOf(
        err,
        this.#logger,
        AUTH_UNAVAILABLE.message,
        'key verification',
        'api_key',
      );
    }
  }
}
