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

type Outcome = { ok: true; key: VerifiedKey } | { ok: false; error: HeraldError };
interface Entry {
  outcome: Outcome;
  until: number;
  /** From then on (a verified key), a use of the entry asks auth again in the background. */
  refreshAt: number;
}

/** Share of the TTL after which a verified key is refreshed ahead of its expiry. */
const REFRESH_AHEAD = 0.75;

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
  readonly #ttlMs: number;
  readonly #maxEntries: number;
  readonly #timeoutMs: number;
  readonly #withSecrets: boolean;
  readonly #negativeTtlMs: number;
  readonly #maxNegativeEntries: number;
  readonly #cache = new Map<string, Entry>();
  readonly #negative = new Map<string, Entry>();
  readonly #inflight = new Map<string, Promise<Outcome>>();
  readonly #listeners = new Set<(msg: AuthInvalidate) => void>();
  readonly #sub: Subscription;
  /** Counts invalidations, so an answer asked for before one is not cached after it. */
  #generation = 0;
  readonly #logger: Logger;

  constructor(nc: NatsConnection, logger: Logger, opts: KeyVerifierOptions = {}) {
    this.#requester = new NatsRequester(nc);
    this.#logger = logger;
    this.#ttlMs = opts.ttlMs ?? 5000;
    this.#maxEntries = opts.maxEntries ?? 10_000;
    this.#timeoutMs = opts.timeoutMs ?? 2000;
    this.#withSecrets = opts.withSigningSecrets ?? false;
    this.#negativeTtlMs = opts.negativeTtlMs ?? 5000;
    this.#maxNegativeEntries = opts.maxNegativeEntries ?? 10_000;
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
    const hash = hashKey(apiKey);
    const now = Date.now();
    const cached = this.#cache.get(hash) ?? this.#negative.get(hash);
    let outcome: Outcome;
    if (cached && cached.until > now) {
      outcome = cached.outcome;
      // Asked again before it expires, so a busy key's dispatches never all wait for auth at
      // once at its expiry (a stall every TTL); meanwhile the answer, not older than the TTL, holds.
      if (now >= cached.refreshAt && !this.#inflight.has(hash)) this.#refresh(hash);
    } else {
      outcome = await (this.#inflight.get(hash) ?? this.#refresh(hash));
    }
    if (outcome.ok) return outcome.key;
    throw outcome.error;
  }

  /** Called with every invalidation after the cache dropped the matching entries. */
  onInvalidate(listener: (msg: AuthInvalidate) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  invalidate(msg: AuthInvalidate): void {
    // An answer asked for before this invalidation may predate it: it is not cached (see #ask).
    this.#generation++;
    for (const [hash, entry] of this.#cache) {
      if (!entry.outcome.ok) continue;
      const { key } = entry.outcome;
      if (
        (msg.key_id && key.id === msg.key_id) ||
        (msg.account_id && key.account_id === msg.account_id)
      ) {
        this.#cache.delete(hash);
      }
    }
    // A refusal names no account, so a plan change forgets every plan refusal: a renewal then
    // takes effect at once instead of after the TTL.
    if (msg.reason === 'plan_changed') {
      for (const [hash, { outcome }] of this.#negative) {
        if (!outcome.ok && outcome.error.code === 'plan_inactive') this.#negative.delete(hash);
      }
    }
    for (const listener of this.#listeners) listener(msg);
  }

  /** Cached verifications, successes and refusals. */
  get size(): number {
    return this.#cache.size + this.#negative.size;
  }

  close(): void {
    this.#sub.unsubscribe();
    this.#cache.clear();
    this.#negative.clear();
    this.#listeners.clear();
  }

  /** Asks auth about a key, shared by every verify of it until the answer comes. */
  #refresh(hash: string): Promise<Outcome> {
    const pending = this.#ask(hash).finally(() => this.#inflight.delete(hash));
    this.#inflight.set(hash, pending);
    return pending;
  }

  async #ask(hash: string): Promise<Outcome> {
    const generation = this.#generation;
    let outcome: Outcome;
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
      outcome = { ok: true, key: reply.key };
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
        return { ok: false, error };
      }
      // Auth's refusal, with its code: the key is at fault.
      outcome = {
        ok: false,
        error: new HeraldError(err.code, err.message, { field: 'api_key' }),
      };
    }
    if (generation === this.#generation) this.#remember(hash, outcome);
    return outcome;
  }

  #remember(hash: string, outcome: Outcome): void {
    const [cache, ttlMs, max] = outcome.ok
      ? [this.#cache, this.#ttlMs, this.#maxEntries]
      : [this.#negative, this.#negativeTtlMs, this.#maxNegativeEntries];
    this.#cache.delete(hash);
    this.#negative.delete(hash);
    const now = Date.now();
    cache.set(hash, {
      outcome,
      until: now + ttlMs,
      refreshAt: outcome.ok ? now + ttlMs * REFRESH_AHEAD : Number.POSITIVE_INFINITY,
    });
    while (cache.size > max) {
      const oldest = cache.keys().next().value;
      if (oldest === undefined) break;
      cache.delete(oldest);
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
