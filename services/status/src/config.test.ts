import { ConfigError } from '@herald/kit';
import { describe, expect, it } from 'vitest';
import { loadConfig } from './config.js';

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

describe('status loadConfig', () => {
  it('writes 1000 records per transaction by default', () => {
    expect(loadConfig(base).STATUS_BATCH_MAX).toBe(1000);
  });

  it("bounds STATUS_BATCH_MAX to 1..7000, below Postgres's 65,535 bind parameters", () => {
    expect(loadConfig({ ...base, STATUS_BATCH_MAX: '1' }).STATUS_BATCH_MAX).toBe(1);
    expect(loadConfig({ ...base, STATUS_BATCH_MAX: '7000' }).STATUS_BATCH_MAX).toBe(7000);
    expect(problems({ STATUS_BATCH_MAX: '0' })).toContain(
      'STATUS_BATCH_MAX ("0"): must be at least 1',
    );
    expect(problems({ STATUS_BATCH_MAX: '7001' })).toContain(
      'STATUS_BATCH_MAX ("7001"): must be at most 7000',
    );
  });

  it('keeps 10,000 inbox events per recipient by default, bounded 1..1,000,000', () => {
    expect(loadConfig(base).INBOX_MAX_PER_RECIPIENT).toBe(10_000);
    expect(loadConfig({ ...base, INBOX_MAX_PER_RECIPIENT: '1' }).INBOX_MAX_PER_RECIPIENT).toBe(1);
    expect(problems({ INBOX_MAX_PER_RECIPIENT: '0' })).toContain(
      'INBOX_MAX_PER_RECIPIENT ("0"): must be at least 1',
    );
    expect(problems({ INBOX_MAX_PER_RECIPIENT: '1000001' })).toContain(
      'INBOX_MAX_PER_RECIPIENT ("1000001"): must be at most 1000000',
    );
    expect(loadConfig(base).INBOX_BATCH_MAX).toBe(1000);
    expect(problems({ INBOX_BATCH_MAX: '10001' })).toContain(
      'INBOX_BATCH_MAX ("10001"): must be at most 10000',
    );
  });

  it('webhook defaults: 100,000 per endpoint queue, 4 per endpoint, 32 in all, 15 s, the Svix schedule, 5 days, 24 h', () => {
    const c = loadConfig(base);
    expect(c.WEBHOOK_SECRET_KEY).toBeUndefined();
    expect(c.WEBHOOK_ALLOW_PRIVATE).toBe(false);
    expect(c.WEBHOOK_ENDPOINT_QUEUE_MAX).toBe(100_000);
    expect(c.WEBHOOK_ENDPOINT_CONCURRENCY).toBe(4);
    expect(c.WEBHOOK_CONCURRENCY).toBe(32);
    expect(c.WEBHOOK_ENDPOINT_PREFETCH).toBe(64);
    expect(c.WEBHOOK_CLAIM_BATCH).toBe(1000);
    expect(c.WEBHOOK_TIMEOUT_MS).toBe(15_000);
    expect(c.WEBHOOK_RETRY_SCHEDULE).toEqual([
      5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 36_000_000,
    ]);
    expect(c.WEBHOOK_DISABLE_AFTER_MS).toBe(5 * 24 * 3600_000);
    expect(c.WEBHOOK_SECRET_OVERLAP_MS).toBe(24 * 3600_000);
    expect(c.WEBHOOK_ATTEMPTS_KEPT).toBe(1000);
    expect(c.WEBHOOK_RESPONSE_MAX_BYTES).toBe(65_536);
  });

  it.each([
    ['WEBHOOK_ENDPOINT_QUEUE_MAX', 1, 10_000_000],
    ['WEBHOOK_ENDPOINT_CONCURRENCY', 1, 100],
    ['WEBHOOK_CONCURRENCY', 0, 1000],
    ['WEBHOOK_ENDPOINT_PREFETCH', 1, 10_000],
    ['WEBHOOK_CLAIM_BATCH', 1, 100_000],
    ['WEBHOOK_TIMEOUT_MS', 100, 120_000],
    ['WEBHOOK_DISABLE_AFTER_MS', 1000, 365 * 24 * 3600_000],
    ['WEBHOOK_SECRET_OVERLAP_MS', 0, 30 * 24 * 3600_000],
    ['WEBHOOK_ATTEMPTS_KEPT', 100, 1_000_000],
    ['WEBHOOK_POLL_MS', 10, 60_000],
    ['WEBHOOK_RESPONSE_MAX_BYTES', 0, 16 * 1024 * 1024],
    ['WEBHOOK_DRAIN_MS', 0, 120_000],
  ] as const)('%s is bounded %d..%d', (name, min, max) => {
    // kit's parseEnv shows a value only when the name does not look like a secret's.
    const shown = (v: number) => (/SECRET/.test(name) ? 'set' : JSON.stringify(String(v)));
    expect(loadConfig({ ...base, [name]: String(min) })[name]).toBe(min);
    expect(loadConfig({ ...base, [name]: String(max) })[name]).toBe(max);
    expect(problems({ [name]: String(min - 1) })).toContain(
      `${name} (${shown(min - 1)}): must be at least ${min}`,
    );
    expect(problems({ [name]: String(max + 1) })).toContain(
      `${name} (${shown(max + 1)}): must be at most ${max}`,
    );
  });

  it('WEBHOOK_RETRY_SCHEDULE: a comma list of waits from 1ms to 7d, at most 50', () => {
    expect(
      loadConfig({ ...base, WEBHOOK_RETRY_SCHEDULE: '1ms, 2s,3m,4h,7d' }).WEBHOOK_RETRY_SCHEDULE,
    ).toEqual([1, 2000, 180_000, 14_400_000, 7 * 24 * 3600_000]);
    const fifty = Array.from({ length: 50 }, () => '1s').join(',');
    expect(
      loadConfig({ ...base, WEBHOOK_RETRY_SCHEDULE: fifty }).WEBHOOK_RETRY_SCHEDULE,
    ).toHaveLength(50);
    expect(problems({ WEBHOOK_RETRY_SCHEDULE: `${fifty},1s` })).toContain(
      'must list at most 50 waits',
    );
    expect(problems({ WEBHOOK_RETRY_SCHEDULE: '5s,8d' })).toContain(
      '"8d" is not a wait from 1ms to 7d',
    );
    expect(problems({ WEBHOOK_RETRY_SCHEDULE: '0s' })).toContain('"0s" is not a wait');
    expect(problems({ WEBHOOK_RETRY_SCHEDULE: '5 seconds' })).toContain(
      'write a comma list such as 5s,5m,30m,2h,5h,10h,10h',
    );
  });

  it('WEBHOOK_SECRET_KEY must be the base64 of 32 bytes and is never echoed; WEBHOOK_CA_FILE must exist', () => {
    const key = Buffer.alloc(32, 7).toString('base64');
    expect(loadConfig({ ...base, WEBHOOK_SECRET_KEY: key }).WEBHOOK_SECRET_KEY).toHaveLength(32);
    const bad = problems({ WEBHOOK_SECRET_KEY: 'c2hvcnQ=' });
    expect(bad).toContain('WEBHOOK_SECRET_KEY (set): must be the base64 of 32 random bytes');
    expect(bad).not.toContain('c2hvcnQ=');
    expect(problems({ WEBHOOK_CA_FILE: '/nonexistent/ca.pem' })).toContain(
      'WEBHOOK_CA_FILE ("/nonexistent/ca.pem"): must name a readable PEM file',
    );
  });
});
