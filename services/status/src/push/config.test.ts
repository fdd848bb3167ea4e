import { ConfigError } from '@herald/kit';
import { describe, expect, it } from 'vitest';
import { loadConfig, PROVIDER_URL_MAX } from '../config.js';

const base = {
  TLS_DISABLED: 'true',
  DATABASE_URL: 'postgres://herald:herald@127.0.0.1:5432/herald',
};
const problems = (env: Record<string, string>) => {
  try {
    loadConfig({ ...base, ...env });
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return (err as Error).message;
  }
  throw new Error('expected a ConfigError');
};

/** Each bounded integer setting: its default, both edges accepted, one past each refused. */
const BOUNDS: Array<[string, number, number, number]> = [
  ['PUSH_TIMEOUT_MS', 10_000, 100, 120_000],
  ['PUSH_CONCURRENCY', 16, 0, 1000],
  ['PUSH_POLL_MS', 1000, 10, 60_000],
  ['PUSH_COALESCE_MS', 200, 0, 900],
  ['PUSH_CLAIM_BATCH', 500, 1, 100_000],
  ['PUSH_SUBSCRIPTIONS_PER_RECIPIENT_MAX', 20, 1, 1000],
];

describe('push settings', () => {
  it.each(BOUNDS)('%s: default %i, bounded %i..%i', (name, dflt, min, max) => {
    const read = (v: string) =>
      (loadConfig({ ...base, [name]: v }) as Record<string, unknown>)[name];
    expect((loadConfig(base) as Record<string, unknown>)[name]).toBe(dflt);
    expect(read(String(min))).toBe(min);
    expect(read(String(max))).toBe(max);
    expect(problems({ [name]: String(min - 1) })).toContain(
      `${name} ("${min - 1}"): must be at least ${min}`,
    );
    expect(problems({ [name]: String(max + 1) })).toContain(
      `${name} ("${max + 1}"): must be at most ${max}`,
    );
  });

  it('PUSH_ALLOW_PRIVATE is false unless set; PUSH_CA_FILE must exist', () => {
    expect(loadConfig(base).PUSH_ALLOW_PRIVATE).toBe(false);
    expect(loadConfig({ ...base, PUSH_ALLOW_PRIVATE: 'true' }).PUSH_ALLOW_PRIVATE).toBe(true);
    expect(loadConfig(base).PUSH_CA_FILE).toBeUndefined();
    expect(problems({ PUSH_CA_FILE: '/nonexistent/ca.pem' })).toContain(
      'PUSH_CA_FILE ("/nonexistent/ca.pem"): must name a readable PEM file',
    );
  });

  it('PUSH_RETRY_SCHEDULE: its own default, the webhook rules (1ms..7d each, at most 50)', () => {
    expect(loadConfig(base).PUSH_RETRY_SCHEDULE).toEqual([
      5000, 30_000, 120_000, 600_000, 1_800_000, 3_600_000, 7_200_000,
    ]);
    expect(loadConfig({ ...base, PUSH_RETRY_SCHEDULE: '1ms,7d' }).PUSH_RETRY_SCHEDULE).toEqual([
      1,
      7 * 24 * 3600_000,
    ]);
    const fifty = Array.from({ length: 50 }, () => '1s').join(',');
    expect(loadConfig({ ...base, PUSH_RETRY_SCHEDULE: fifty }).PUSH_RETRY_SCHEDULE).toHaveLength(
      50,
    );
    expect(problems({ PUSH_RETRY_SCHEDULE: `${fifty},1s` })).toContain(
      'must list at most 50 waits',
    );
    expect(problems({ PUSH_RETRY_SCHEDULE: '8d' })).toContain(
      'write a comma list such as 5s,30s,2m,10m,30m,1h,2h',
    );
  });

  it('PUSH_VAPID_SUBJECT: a mailto: or https: URI, by default one that reaches nobody', () => {
    expect(loadConfig(base).PUSH_VAPID_SUBJECT).toBe('mailto:push@herald.invalid');
    expect(
      loadConfig({ ...base, PUSH_VAPID_SUBJECT: 'mailto:ops@example.com' }).PUSH_VAPID_SUBJECT,
    ).toBe('mailto:ops@example.com');
    expect(
      loadConfig({ ...base, PUSH_VAPID_SUBJECT: 'https://example.com/c' }).PUSH_VAPID_SUBJECT,
    ).toBe('https://example.com/c');
    expect(problems({ PUSH_VAPID_SUBJECT: 'http://example.com' })).toContain(
      'must be a mailto: or https: URI',
    );
  });

  it.each([
    ['FCM_ORIGIN', 'https://fcm.googleapis.com'],
    ['APNS_ORIGIN', 'https://api.push.apple.com'],
    ['APNS_SANDBOX_ORIGIN', 'https://api.sandbox.push.apple.com'],
  ])('%s: default %s, an http(s) origin of at most 2048 characters', (name, dflt) => {
    const read = (v: string) =>
      (loadConfig({ ...base, [name]: v }) as Record<string, unknown>)[name];
    expect((loadConfig(base) as Record<string, unknown>)[name]).toBe(dflt);
    expect(read('http://127.0.0.1:8451')).toBe('http://127.0.0.1:8451');
    const host = (n: number) => `https://${'a'.repeat(n - 'https://'.length - 4)}.dev`;
    expect(read(host(PROVIDER_URL_MAX))).toBe(host(PROVIDER_URL_MAX));
    expect(problems({ [name]: host(PROVIDER_URL_MAX + 1) })).toContain(
      `${name} ("${host(PROVIDER_URL_MAX + 1)}"): must be at most ${PROVIDER_URL_MAX} characters`,
    );
    expect(problems({ [name]: 'https://x.dev/v1' })).toContain('must be an origin only');
    expect(problems({ [name]: 'ftp://x.dev' })).toContain('must be an absolute http(s) URL');
  });

  it("FCM_TOKEN_URI: default Google's, an http(s) URL of at most 2048 characters", () => {
    expect(loadConfig(base).FCM_TOKEN_URI).toBe('https://oauth2.googleapis.com/token');
    const url = (n: number) => `https://x.dev/${'t'.repeat(n - 'https://x.dev/'.length)}`;
    expect(loadConfig({ ...base, FCM_TOKEN_URI: url(PROVIDER_URL_MAX) }).FCM_TOKEN_URI).toBe(
      url(PROVIDER_URL_MAX),
    );
    expect(problems({ FCM_TOKEN_URI: url(PROVIDER_URL_MAX + 1) })).toContain(
      `must be at most ${PROVIDER_URL_MAX} characters`,
    );
    expect(problems({ FCM_TOKEN_URI: 'token' })).toContain('must be an absolute http(s) URL');
  });
});
