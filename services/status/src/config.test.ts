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
});
