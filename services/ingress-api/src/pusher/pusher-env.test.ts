import { ConfigError } from '@herald/kit';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../config.js';
import { pusherBodyLimit, pusherLimitsOf } from './pusher-env.js';

const base = { TLS_DISABLED: 'true' };
const load = (env: Record<string, string>) => loadConfig({ ...base, ...env });
const problems = (env: Record<string, string>) => {
  try {
    loadConfig({ ...base, ...env });
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return (err as Error).message;
  }
  throw new Error('expected a ConfigError');
};

describe('the Pusher HTTP API settings', () => {
  it("defaults to Pusher's own limits", () => {
    expect(load({})).toMatchObject({
      PUSHER_MAX_CHANNELS: 100,
      PUSHER_MAX_BATCH_EVENTS: 10,
      PUSHER_MAX_DATA_BYTES: 10_240,
      PUSHER_MAX_EVENT_NAME: 200,
      PUSHER_TIMESTAMP_SKEW_S: 600,
    });
  });

  it('takes each at its lower and upper edge', () => {
    const low = {
      PUSHER_MAX_CHANNELS: '1',
      PUSHER_MAX_BATCH_EVENTS: '1',
      PUSHER_MAX_DATA_BYTES: '1',
      PUSHER_MAX_EVENT_NAME: '1',
      PUSHER_TIMESTAMP_SKEW_S: '1',
    };
    expect(load(low)).toMatchObject({
      PUSHER_MAX_CHANNELS: 1,
      PUSHER_MAX_BATCH_EVENTS: 1,
      PUSHER_MAX_DATA_BYTES: 1,
      PUSHER_MAX_EVENT_NAME: 1,
      PUSHER_TIMESTAMP_SKEW_S: 1,
    });
    const high = {
      PUSHER_MAX_CHANNELS: '1000',
      PUSHER_MAX_BATCH_EVENTS: '1000',
      PUSHER_MAX_DATA_BYTES: '1048576',
      PUSHER_MAX_EVENT_NAME: '1000',
      PUSHER_TIMESTAMP_SKEW_S: '3600',
    };
    expect(load(high)).toMatchObject({
      PUSHER_MAX_CHANNELS: 1000,
      PUSHER_MAX_BATCH_EVENTS: 1000,
      PUSHER_MAX_DATA_BYTES: 1_048_576,
      PUSHER_MAX_EVENT_NAME: 1000,
      PUSHER_TIMESTAMP_SKEW_S: 3600,
    });
  });

  it('refuses each past either edge, naming every variable at once', () => {
    const low = problems({
      PUSHER_MAX_CHANNELS: '0',
      PUSHER_MAX_BATCH_EVENTS: '0',
      PUSHER_MAX_DATA_BYTES: '0',
      PUSHER_MAX_EVENT_NAME: '0',
      PUSHER_TIMESTAMP_SKEW_S: '0',
    });
    for (const name of [
      'PUSHER_MAX_CHANNELS ("0"): must be at least 1',
      'PUSHER_MAX_BATCH_EVENTS ("0"): must be at least 1',
      'PUSHER_MAX_DATA_BYTES ("0"): must be at least 1',
      'PUSHER_MAX_EVENT_NAME ("0"): must be at least 1',
      'PUSHER_TIMESTAMP_SKEW_S ("0"): must be at least 1',
    ])
      expect(low).toContain(name);
    const high = problems({
      PUSHER_MAX_CHANNELS: '1001',
      PUSHER_MAX_BATCH_EVENTS: '1001',
      PUSHER_MAX_DATA_BYTES: '1048577',
      PUSHER_MAX_EVENT_NAME: '1001',
      PUSHER_TIMESTAMP_SKEW_S: '3601',
    });
    for (const name of [
      'PUSHER_MAX_CHANNELS ("1001"): must be at most 1000',
      'PUSHER_MAX_BATCH_EVENTS ("1001"): must be at most 1000',
      'PUSHER_MAX_DATA_BYTES ("1048577"): must be at most 1048576',
      'PUSHER_MAX_EVENT_NAME ("1001"): must be at most 1000',
      'PUSHER_TIMESTAMP_SKEW_S ("3601"): must be at most 3600',
    ])
      expect(high).toContain(name);
  });

  it('derives a body limit that holds a full batch of fully escaped events', () => {
    const limits = pusherLimitsOf(load({}));
    const limit = pusherBodyLimit(limits, 164);
    expect(limit).toBeGreaterThan(10 * 6 * (10_240 + 200 + 100 * 167));
    expect(limit).toBeLessThan(2 * 1024 * 1024);
  });
});
