import {
  AuthInvalidate,
  AuthVerifyReply,
  HeraldError,
  subjects,
  type VerifiedKey,
} from '@herald/proto';
import { JSONCodec, type NatsConnection, type Subscription } from 'nats';
import { hashKey } from './key-hash.js';
import type { Logger } from './logger.js';

export interface KeyVerifierOptions {
  /** How long a verification (positive or negative) is reused, ms. Default 5000. */
  ttlMs?: number;
  /** Most cached verifications; the oldest is evicted first. Default 10000. */
  maxEntries?: number;
  /** How long to wait for the auth service, ms. Default 2000. */
  timeoutMs?: number;
}

type Outcome = { ok: true; key: VerifiedKey } | { ok: false; error: HeraldError };
interface Entry {
  outcome: Outcome;
  until: number;
}

const codec = JSONCodec();

/**
 * Verifies API keys through the auth service (`rt.auth.verify`), caching each answer briefly and
 * dropping cached answers the moment auth broadcasts an invalidation (revocation, reset, plan
 * change). Only the key's SHA-256 crosses NATS. Expiry is re-checked at use by authorizeKeyUse,
 * so a cached answer never outlives the key.
 */
export class KeyVerifier {
  readonly #nc: NatsConnection;
  readonly #ttlMs: number;
  readonly #maxEntries: number;
  readonly #timeoutMs: number;
  readonly #cache = new Map<string, Entry>();
  readonly #inflight = new Map<string, Promise<Outcome>>();
  readonly #listeners = new Set<(msg: AuthInvalidate) => void>();
  readonly #sub: Subscription;
  readonly #logger: Logger;

  constructor(nc: NatsConnection, logger: Logger, opts: KeyVerifierOptions = {}) {
    this.#nc = nc;
    this.#logger = logger;
    this.#ttlMs = opts.ttlMs ?? 5000;
    this.#maxEntries = opts.maxEntries ?? 10_000;
    this.#timeoutMs = opts.timeoutMs ?? 2000;
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

  /** Resolves with the verified key or rejects with a HeraldError (401 codes, or 503 `unavailable`). */
  async verify(apiKey: string): Promise<VerifiedKey> {
    const hash = hashKey(apiKey);
    const now = Date.now();
    const cached = this.#cache.get(hash);
    let outcome: Outcome;
    if (cached && cached.until > now) {
      outcome = cached.outcome;
    } else {
      let pending = this.#inflight.get(hash);
      if (!pending) {
        pending = this.#ask(hash).finally(() => this.#inflight.delete(hash));
        this.#inflight.set(hash, pending);
      }
      outcome = await pending;
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
    for (const [hash, entry] of this.#cache) {
      const key = entry.outcome.ok ? entry.outcome.key : undefined;
      if (!key) {
        // A refusal names no account, so a plan change forgets every plan refusal: a renewal
        // then takes effect at once instead of after the TTL.
        const { outcome } = entry;
        if (
          msg.reason === 'plan_changed' &&
          !outcome.ok &&
          outcome.error.code === 'plan_inactive'
        ) {
          this.#cache.delete(hash);
        }
        continue;
      }
      if (
        (msg.key_id && key.id === msg.key_id) ||
        (msg.account_id && key.account_id === msg.account_id)
      ) {
        this.#cache.delete(hash);
      }
    }
    for (const listener of this.#listeners) listener(msg);
  }

  get size(): number {
    return this.#cache.size;
  }

  close(): void {
    this.#sub.unsubscribe();
    this.#cache.clear();
    this.#listeners.clear();
  }

  async #ask(hash: string): Promise<Outcome> {
    let reply: AuthVerifyReply;
    try {
      const msg = await this.#nc.request(
        subjects.authVerify,
        codec.encode({ v: 1, key_hash: hash }),
        {
          timeout: this.#timeoutMs,
        },
      );
      reply = AuthVerifyReply.parse(codec.decode(msg.data));
    } catch (err) {
      // Not cached: the next request asks again.
      this.#logger.error({ err: String(err) }, 'key verification failed: auth unavailable');
      return {
        ok: false,
        error: new HeraldError(
          'unavailable',
          'Key verification is temporarily unavailable: retry shortly',
          { cause: err },
        ),
      };
    }
    const outcome: Outcome = reply.ok
      ? { ok: true, key: reply.key }
      : {
          ok: false,
          error:
            reply.error.code === 'internal'
              ? new HeraldError(
                  'unavailable',
                  'Key verification is temporarily unavailable: retry shortly',
                )
              : new HeraldError(reply.error.code, reply.error.message, { field: 'api_key' }),
        };
    if (reply.ok || reply.error.code !== 'internal') this.#remember(hash, outcome);
    return outcome;
  }

  #remember(hash: string, outcome: Outcome): void {
    this.#cache.delete(hash);
    this.#cache.set(hash, { outcome, until: Date.now() + this.#ttlMs });
    while (this.#cache.size > this.#maxEntries) {
      const oldest = this.#cache.keys().next().value;
      if (oldest === undefined) break;
      this.#cache.delete(oldest);
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
