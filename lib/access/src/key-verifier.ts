import type { Logger } from '@herald/kit';
import { NatsRequester, type NoAnswer } from '@herald/nats';
import {
  AuthInvalidate,
  AuthVerifyReply,
  HeraldError,
  invalidApiKey,
  isWellFormedApiKey,
  subjects,
  type VerifiedKey,
} from '@herald/proto';
import { JSONCodec, type NatsConnection, type Subscription } from 'nats';
import { hashKey } from './key-hash.js';
import { type Verdict, VerdictCache } from './verdict-cache.js';

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

const codec = JSONCodec();

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
  readonly #verdicts: VerdictCache<VerifiedKey>;
  readonly #listeners = new Set<(msg: AuthInvalidate) => void>();
  readonly #sub: Subscription;
  readonly #logger: Logger;

  constructor(nc: NatsConnection, logger: Logger, opts: KeyVerifierOptions = {}) {
    this.#requester = new NatsRequester(nc);
    this.#logger = logger;
    this.#timeoutMs = opts.timeoutMs ?? 2000;
    this.#withSecrets = opts.withSigningSecrets ?? false;
    this.#verdicts = new VerdictCache((hash) => this.#ask(hash), {
      ttlMs: opts.ttlMs ?? 5000,
      maxEntries: opts.maxEntries ?? 10_000,
      negativeTtlMs: opts.negativeTtlMs ?? 5000,
      maxNegativeEntries: opts.maxNegativeEntries ?? 10_000,
    });
    this.#sub = nc.subscribe(subjects.authInvalidate, {
      callback: (err, msg) => {
        if (err) return;
        const parsed = AuthInvalidate.safeParse(safeDecode(msg.data));
        if (!parsed.success) {
          this.#logger.warn('ignoring malformed auth invalidation');
          return;
        }
        this.invalidate(parsed.data);
      },
    });
  }

  /**
   * Resolves with the verified key or rejects with a HeraldError (401 codes, or 503 `unavailable`).
   * A value that cannot be a key is refused here, before any hashing or lookup.
   */
  async verify(apiKey: string): Promise<VerifiedKey> {
    if (!isWellFormedApiKey(apiKey)) throw invalidApiKey();
    return this.#verdicts.get(hashKey(apiKey));
  }

  /** Called with every invalidation after the cache dropped the matching entries. */
  onInvalidate(listener: (msg: AuthInvalidate) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  invalidate(msg: AuthInvalidate): void {
    // An answer asked for before this invalidation may predate it: it is not cached.
    this.#verdicts.forget(
      (key) =>
        Boolean(
          (msg.key_id && key.id === msg.key_id) ||
            (msg.account_id && key.account_id === msg.account_id),
        ),
      // A refusal names no account, so a plan change forgets every plan refusal: a renewal then
      // takes effect at once instead of after the TTL.
      msg.reason === 'plan_changed' ? (error) => error.code === 'plan_inactive' : undefined,
    );
    for (const listener of this.#listeners) listener(msg);
  }

  /** Cached verifications, successes and refusals. */
  get size(): number {
    return this.#verdicts.size;
  }

  close(): void {
    this.#sub.unsubscribe();
    this.#verdicts.clear();
    this.#listeners.clear();
  }

  /** Asks auth about a key: its verdict, cached unless auth did not answer. */
  async #ask(hash: string): Promise<{ verdict: Verdict<VerifiedKey>; cache: boolean }> {
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
      return { verdict: { ok: true, value: reply.key }, cache: true };
    } catch (err) {
      if (!(err instanceof HeraldError) || err.code === 'unavailable') {
        // No answer (auth absent, slow or failing inside): not cached, the next verify asks again.
        this.#logger.error(
          { err: String(err instanceof HeraldError ? err.cause : err) },
          'key verification failed: auth unavailable',
        );
        const error =
          err instanceof HeraldError
            ? err
            : new HeraldError('unavailable', AUTH_UNAVAILABLE.message, { cause: err });
        return { verdict: { ok: false, error }, cache: false };
      }
      // Auth's refusal, with its code: the key is at fault.
      const error = new HeraldError(err.code, err.message, { field: 'api_key' });
      return { verdict: { ok: false, error }, cache: true };
    }
  }
}

function safeDecode(data: Uint8Array): unknown {
  try {
    return codec.decode(data);
  } catch {
    return undefined;
  }
}
