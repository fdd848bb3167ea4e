import { PusherAppVerifier, type VerifiedPusherApp } from '@herald/access';
import type { Logger } from '@herald/kit';
import { type AuthInvalidate, invalidApiKey, PUSHER_APP_KEY } from '@herald/proto';
import type { NatsConnection } from 'nats';

/** An app and its bound key, verified as `rt.auth.verify` would. */
export type AppGrant = VerifiedPusherApp;

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

/**
 * The edge's Pusher apps, by key: lib/access's {@link PusherAppVerifier} (`rt.auth.pusher`, cached
 * as ingress and the key verifier cache). The edge's sockets re-check their app after an
 * invalidation, so {@link PusherSockets} calls {@link AppLookup.invalidate} itself before it does:
 * the verifier's own subscription may hear the same broadcast later, and forgetting twice is
 * harmless, while a re-check answered from a stale entry would not be.
 */
export class AppLookup {
  readonly #apps: PusherAppVerifier;

  constructor(nc: NatsConnection, logger: Logger, opts: AppLookupOptions) {
    this.#apps = new PusherAppVerifier(nc, logger, {
      ttlMs: opts.ttlMs,
      negativeTtlMs: opts.negativeTtlMs,
      timeoutMs: opts.timeoutMs,
      maxEntries: opts.maxEntries ?? 10_000,
    });
  }

  /** The app of this key and its bound key; rejects with the HeraldError (`invalid_api_key` for no app). */
  byKey(appKey: string): Promise<AppGrant> {
    if (!PUSHER_APP_KEY.test(appKey)) return Promise.reject(invalidApiKey());
    return this.#apps.lookup({ key: appKey });
  }

  /** Drops what an invalidation concerns. */
  invalidate(msg: AuthInvalidate): void {
    this.#apps.invalidate(msg);
  }

  get size(): number {
    return this.#apps.size;
  }

  close(): void {
    this.#apps.close();
  }
}
