import { ConfigError } from '@herald/kit';
import { describe, expect, it } from 'vitest';
import { DEFAULT_SCHEDULE, loadConfig, loadRunOnceConfig } from './config.js';

const tls = { TLS_CERT_FILE: '/c.pem', TLS_KEY_FILE: '/k.pem' };

describe('retention config', () => {
  it('has the documented defaults', () => {
    const c = loadConfig(tls);
    expect(c.PORT).toBe(8446);
    expect(c.RETENTION_SCHEDULE).toBe(DEFAULT_SCHEDULE);
    expect(c.RETENTION_API_RATE).toBe(500);
    expect(c.RETENTION_API_TIMEOUT_MS).toBe(5000);
    expect(c.RETENTION_LOCK_TTL_MS).toBe(60_000);
    expect(c.QUEUE_DEPTH_INTERVAL_MS).toBe(300_000);
  });

  it('rejects a bad cron expression, naming the variable and an example', () => {
    expect(() => loadConfig({ ...tls, RETENTION_SCHEDULE: 'every sunday' })).toThrow(ConfigError);
    expect(() => loadConfig({ ...tls, RETENTION_SCHEDULE: 'every sunday' })).toThrow(
      /RETENTION_SCHEDULE \("every sunday"\): must be a cron expression such as "0 3 \* \* 0"/,
    );
    expect(loadConfig({ ...tls, RETENTION_SCHEDULE: '30 2 * * 1' }).RETENTION_SCHEDULE).toBe(
      '30 2 * * 1',
    );
  });

  it('requires TLS files for the service, not for run-once', () => {
    expect(() => loadConfig({})).toThrow(/TLS_CERT_FILE \(unset\): is required/);
    expect(loadConfig({ TLS_DISABLED: 'true' }).TLS_DISABLED).toBe(true);
    expect(loadRunOnceConfig({}).RETENTION_API_RATE).toBe(500);
  });

  it('enforces each limit at its edge', () => {
    expect(() => loadRunOnceConfig({ RETENTION_API_RATE: '0' })).toThrow(
      /RETENTION_API_RATE \("0"\): must be at least 1/,
    );
    expect(loadRunOnceConfig({ RETENTION_API_RATE: '1' }).RETENTION_API_RATE).toBe(1);
    expect(loadRunOnceConfig({ RETENTION_API_RATE: '100000' }).RETENTION_API_RATE).toBe(100_000);
    expect(() => loadRunOnceConfig({ RETENTION_API_RATE: '100001' })).toThrow(/at most 100000/);
    expect(() => loadRunOnceConfig({ RETENTION_LOCK_TTL_MS: '999' })).toThrow(
      /RETENTION_LOCK_TTL_MS/,
    );
    expect(loadRunOnceConfig({ RETENTION_LOCK_TTL_MS: '1000' }).RETENTION_LOCK_TTL_MS).toBe(1000);
    expect(loadRunOnceConfig({}).NATS_REPLICAS).toBe(1);
    expect(loadRunOnceConfig({ NATS_REPLICAS: '5' }).NATS_REPLICAS).toBe(5);
    expect(() => loadRunOnceConfig({ NATS_REPLICAS: '6' })).toThrow(/NATS_REPLICAS.*at most 5/);
    expect(() => loadRunOnceConfig({ NATS_REPLICAS: '0' })).toThrow(/NATS_REPLICAS/);
    expect(() => loadRunOnceConfig({ RETENTION_API_TIMEOUT_MS: '99' })).toThrow(
      /RETENTION_API_TIMEOUT_MS/,
    );
    expect(loadConfig({ ...tls, QUEUE_DEPTH_INTERVAL_MS: '0' }).QUEUE_DEPTH_INTERVAL_MS).toBe(0);
    expect(() => loadConfig({ ...tls, QUEUE_DEPTH_INTERVAL_MS: '-1' })).toThrow(
      /QUEUE_DEPTH_INTERVAL_MS/,
    );
  });
});

describe('QUEUE_PARTITIONS', () => {
  it('defaults to 16, takes 1 to 256 and refuses the values past either edge', () => {
    expect(loadConfig({ ...tls }).QUEUE_PARTITIONS).toBe(16);
    expect(loadConfig({ ...tls, QUEUE_PARTITIONS: '1' }).QUEUE_PARTITIONS).toBe(1);
    expect(loadConfig({ ...tls, QUEUE_PARTITIONS: '256' }).QUEUE_PARTITIONS).toBe(256);
    for (const bad of ['0', '257', '2.5', 'many']) {
      expect(() => loadConfig({ ...tls, QUEUE_PARTITIONS: bad })).toThrow(/QUEUE_PARTITIONS/);
    }
  });
});
