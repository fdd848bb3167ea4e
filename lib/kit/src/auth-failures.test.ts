import type http from 'node:http';
import { HeraldError } from '@herald/proto';
import { describe, expect, it } from 'vitest';
import {
  AuthFailureEnv,
  AuthFailureLimiter,
  isAuthFailure,
  sourceAddress,
} from './auth-failures.js';

function limiter(env: Record<string, string>, clock: { now: number }) {
  return new AuthFailureLimiter(AuthFailureEnv.parse(env), () => clock.now);
}

function refusal(fn: () => void): HeraldError | undefined {
  try {
    fn();
  } catch (err) {
    if (err instanceof HeraldError) return err;
    throw err;
  }
  return undefined;
}

describe('AuthFailureLimiter', () => {
  it('refuses a source at exactly AUTH_FAIL_LIMIT failures, until the window ends', () => {
    const clock = { now: 1_000_000 };
    const l = limiter({ AUTH_FAIL_LIMIT: '3', AUTH_FAIL_WINDOW_MS: '10000' }, clock);
    l.fail('a');
    l.fail('a');
    expect(refusal(() => l.check('a'))).toBeUndefined();
    l.fail('a');
    const err = refusal(() => l.check('a'));
    expect(err).toMatchObject({
      code: 'auth_failures',
      status: 403,
      field: 'api_key',
      retryAfter: 10,
    });
    expect(refusal(() => l.check('b'))).toBeUndefined();
    clock.now += 9_001;
    expect(refusal(() => l.check('a'))?.retryAfter).toBe(1);
    clock.now += 999;
    expect(refusal(() => l.check('a'))).toBeUndefined();
  });

  it('is off with AUTH_FAIL_LIMIT=0', () => {
    const l = limiter({ AUTH_FAIL_LIMIT: '0' }, { now: 0 });
    for (let i = 0; i < 100; i++) l.fail('a');
    expect(refusal(() => l.check('a'))).toBeUndefined();
    expect(l.size).toBe(0);
  });

  it('tracks at most AUTH_FAIL_MAX_SOURCES addresses, forgetting the oldest', () => {
    const l = limiter({ AUTH_FAIL_LIMIT: '1', AUTH_FAIL_MAX_SOURCES: '2' }, { now: 0 });
    l.fail('a');
    l.fail('b');
    l.fail('c');
    expect(l.size).toBe(2);
    expect(refusal(() => l.check('a'))).toBeUndefined();
    expect(refusal(() => l.check('c'))?.code).toBe('auth_failures');
  });

  it('counts 401s only', () => {
    expect(isAuthFailure(new HeraldError('invalid_api_key', 'x'))).toBe(true);
    expect(isAuthFailure(new HeraldError('missing_api_key', 'x'))).toBe(true);
    expect(isAuthFailure(new HeraldError('origin_mismatch', 'x'))).toBe(false);
    expect(isAuthFailure(new Error('x'))).toBe(false);
  });
});

describe('sourceAddress', () => {
  const req = (xff?: string) =>
    ({
      socket: { remoteAddress: '10.0.0.1' },
      headers: xff === undefined ? {} : { 'x-forwarded-for': xff },
    }) as unknown as http.IncomingMessage;

  it('is the TCP peer unless proxies are trusted, then read from the right of X-Forwarded-For', () => {
    expect(sourceAddress(req('6.6.6.6'), 0)).toBe('10.0.0.1');
    expect(sourceAddress(req('6.6.6.6, 1.2.3.4'), 1)).toBe('1.2.3.4');
    expect(sourceAddress(req('6.6.6.6, 1.2.3.4, 10.0.0.9'), 2)).toBe('1.2.3.4');
    expect(sourceAddress(req(), 1)).toBe('10.0.0.1');
  });
});
