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
});
