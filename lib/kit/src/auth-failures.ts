import type http from 'node:http';
import { HeraldError } from '@herald/proto';
import { z } from 'zod';
import { envInt } from './config.js';

/** Environment of the failed-authentication limit, shared by every listener that verifies keys. */
export const AuthFailureEnv = z.object({
  /**
   * Failed authentications (any 401: missing, malformed, unknown, revoked or expired key) one
   * source address may make per AUTH_FAIL_WINDOW_MS before every request from it is refused with
   * 403 auth_failures until the window ends. 0 turns the limit off. Default 100.
   */
  AUTH_FAIL_LIMIT: envInt(100, 0, 1_000_000),
  /** The window of AUTH_FAIL_LIMIT, ms; also the longest a source stays refused. Default 60000. */
  AUTH_FAIL_WINDOW_MS: envInt(60_000, 1000, 86_400_000),
  /** Most source addresses tracked at once; the oldest is forgotten first. Default 100000. */
  AUTH_FAIL_MAX_SOURCES: envInt(100_000, 1, 10_000_000),
  /**
   * Proxies in front of this listener that append to X-Forwarded-For. 0 (default): the source is
   * the TCP peer. Behind N trusted proxies, the Nth address from the right of X-Forwarded-For
   * is the source (the ones further left are the client's to forge).
   */
  TRUSTED_PROXY_HOPS: envInt(0, 0, 10),
});
export type AuthFailureEnv = z.infer<typeof AuthFailureEnv>;

interface Window {
  start: number;
  failures: number;
}

/**
 * Counts failed authentications per source address in fixed windows, so a sender of garbage
 * keys stops costing auth round trips (and Postgres lookups) after AUTH_FAIL_LIMIT of them: its
 * later requests are refused before any lookup. Memory is bounded by AUTH_FAIL_MAX_SOURCES.
 */
export class AuthFailureLimiter {
  readonly #limit: number;
  readonly #windowMs: number;
  readonly #maxSources: number;
  readonly #now: () => number;
  readonly #windows = new Map<string, Window>();

  constructor(config: AuthFailureEnv, now: () => number = Date.now) {
    this.#limit = config.AUTH_FAIL_LIMIT;
    this.#windowMs = config.AUTH_FAIL_WINDOW_MS;
    this.#maxSources = config.AUTH_FAIL_MAX_SOURCES;
    this.#now = now;
  }

  /** Throws the 403 `auth_failures` (with Retry-After) when `source` is over its limit. */
  check(source: string): void {
    if (this.#limit === 0) return;
    const window = this.#current(source);
    if (!window || window.failures < this.#limit) return;
    const retryAfter = Math.max(1, Math.ceil((window.start + this.#windowMs - this.#now()) / 1000));
    throw new HeraldError(
      'auth_failures',
      `Too many requests with a missing or invalid api_key came from this address (${this.#limit} per ${this.#windowMs / 1000} s): every request from it is refused for ${retryAfter} s; fix the api_key your sender uses, then retry after Retry-After`,
      { field: 'api_key', retryAfter },
    );
  }

  /** True while `source` is refused (the cheap test for dropping its new connections). */
  isBlocked(source: string): boolean {
    if (this.#limit === 0) return false;
    const window = this.#current(source);
    return window !== undefined && window.failures >= this.#limit;
  }

  /** Records one failed authentication from `source`. */
  fail(source: string): void {
    if (this.#limit === 0) return;
    const window = this.#current(source);
    if (window) {
      window.failures++;
      return;
    }
    this.#windows.set(source, { start: this.#now(), failures: 1 });
    while (this.#windows.size > this.#maxSources) {
      const oldest = this.#windows.keys().next().value;
      if (oldest === undefined) break;
      this.#windows.delete(oldest);
    }
  }

  get size(): number {
    return this.#windows.size;
  }

  #current(source: string): Window | undefined {
    const window = this.#windows.get(source);
    if (window && this.#now() - window.start >= this.#windowMs) {
      this.#windows.delete(source);
      return undefined;
    }
    return window;
  }
}

/** True when `err` is a failed authentication: every 401 is one. */
export function isAuthFailure(err: unknown): boolean {
  return err instanceof HeraldError && err.status === 401;
}

/**
 * The address a request came from: the TCP peer, or behind `trustedHops` proxies the address the
 * outermost trusted proxy saw (read from the right of X-Forwarded-For).
 */
export function sourceAddress(req: http.IncomingMessage, trustedHops: number): string {
  const peer = req.socket.remoteAddress ?? 'unknown';
  if (trustedHops === 0) return peer;
  const header = req.headers['x-forwarded-for'];
  const hops = (Array.isArray(header) ? header.join(',') : (header ?? ''))
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  return hops[hops.length - trustedHops] ?? peer;
}
