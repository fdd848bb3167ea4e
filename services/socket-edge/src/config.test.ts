import { ConfigError } from '@herald/kit';
import { describe, expect, it } from 'vitest';
import { loadConfig, queueFrameLimits } from './config.js';

const tls = { TLS_CERT_FILE: '/tmp/cert.pem', TLS_KEY_FILE: '/tmp/key.pem' };

describe('loadConfig', () => {
  it('applies the documented defaults', () => {
    expect(loadConfig(tls)).toMatchObject({
      PORT: 8444,
      HEARTBEAT_INTERVAL_MS: 30_000,
      MAX_UNPROVEN_BYTES: 1_048_576,
      MAX_UNPROVEN_EVENTS: 1000,
      LIVE_PROOF_TIMEOUT_MS: 5000,
      MAX_CLIENT_FRAME_BYTES: 8192,
      INBOX_QUERY_TIMEOUT_MS: 2000,
      INBOX_CATCH_UP_BATCH: 100,
      DEVICE_CATCH_UP_RUN: 256,
      INBOX_DEDUPE_IDS: 1000,
      INBOX_REQUESTS_PER_S: 5,
      INBOX_REQUEST_BURST: 10,
      QUEUE_BATCH: 32,
      QUEUE_RECHECK_MS: 500,
      QUEUE_CHECK_CONCURRENCY: 32,
      ACK_WAIT_MS: 1000,
      MAX_ACK_PENDING: 64,
      QUEUE_CONSUMER_MEMORY: true,
      KEY_CACHE_TTL_MS: 5000,
      AUTH_TIMEOUT_MS: 2000,
      MAX_SOCKETS: 50_000,
      CONNECTION_COUNT_TTL_MS: 30_000,
      CONNECTION_COUNT_REFRESH_MS: 10_000,
      NATS_REPLICAS: 1,
      STATUS_ACK_TIMEOUT_MS: 2000,
      STATUS_PENDING_MAX_BYTES: 16 * 1024 * 1024,
    });
  });

  it('takes the Pusher settings at their bounds, defaults them, and refuses them past either', () => {
    expect(loadConfig(tls)).toMatchObject({
      PUSHER_ACTIVITY_TIMEOUT_S: 120,
      PUSHER_SIGNIN_TIMEOUT_MS: 30_000,
      PUSHER_MAX_CHANNELS_PER_SOCKET: 100,
    });
    const bounds = {
      PUSHER_ACTIVITY_TIMEOUT_S: [10, 3600],
      PUSHER_SIGNIN_TIMEOUT_MS: [1000, 600_000],
      PUSHER_MAX_CHANNELS_PER_SOCKET: [1, 10_000],
    } as const;
    for (const [name, [low, high]] of Object.entries(bounds)) {
      expect(loadConfig({ ...tls, [name]: String(low) })[name as keyof typeof bounds]).toBe(low);
      expect(loadConfig({ ...tls, [name]: String(high) })[name as keyof typeof bounds]).toBe(high);
      expect(() => loadConfig({ ...tls, [name]: String(low - 1) })).toThrow(new RegExp(name));
      expect(() => loadConfig({ ...tls, [name]: String(high + 1) })).toThrow(new RegExp(name));
    }
  });

  it('takes the status acks settings at their bounds and refuses them past either', () => {
    const bounds = {
      STATUS_ACK_TIMEOUT_MS: [100, 60_000],
      STATUS_PENDING_MAX_BYTES: [65_536, 1024 * 1024 * 1024],
    } as const;
    for (const [name, [low, high]] of Object.entries(bounds)) {
      expect(loadConfig({ ...tls, [name]: String(low) })[name as keyof typeof bounds]).toBe(low);
      expect(loadConfig({ ...tls, [name]: String(high) })[name as keyof typeof bounds]).toBe(high);
      expect(() => loadConfig({ ...tls, [name]: String(low - 1) })).toThrow(new RegExp(name));
      expect(() => loadConfig({ ...tls, [name]: String(high + 1) })).toThrow(new RegExp(name));
    }
  });

  it('accepts every limit at its bounds', () => {
    const low = loadConfig({
      ...tls,
      PORT: '0',
      HEARTBEAT_INTERVAL_MS: '100',
      MAX_UNPROVEN_BYTES: '1024',
      MAX_UNPROVEN_EVENTS: '2',
      LIVE_PROOF_TIMEOUT_MS: '100',
      MAX_CLIENT_FRAME_BYTES: '128',
      QUEUE_BATCH: '1',
      QUEUE_RECHECK_MS: '1',
      QUEUE_CHECK_CONCURRENCY: '1',
      ACK_WAIT_MS: '500',
      MAX_ACK_PENDING: '1',
      KEY_CACHE_TTL_MS: '0',
      AUTH_TIMEOUT_MS: '100',
      MAX_SOCKETS: '1',
    });
    expect(low.MAX_SOCKETS).toBe(1);
    for (const [name, value] of [
      ['MAX_UNPROVEN_BYTES', '1023'],
      ['MAX_UNPROVEN_EVENTS', '1'],
      ['LIVE_PROOF_TIMEOUT_MS', '99'],
      ['ACK_WAIT_MS', '499'],
    ] as const) {
      expect(() => loadConfig({ ...tls, [name]: value })).toThrow(new RegExp(name));
    }
    const high = loadConfig({
      ...tls,
      PORT: '65535',
      QUEUE_BATCH: '256',
      QUEUE_CHECK_CONCURRENCY: '4096',
      MAX_CLIENT_FRAME_BYTES: String(1024 * 1024),
    });
    expect(high.QUEUE_BATCH).toBe(256);
    expect(high.QUEUE_CHECK_CONCURRENCY).toBe(4096);
    expect(() => loadConfig({ ...tls, QUEUE_CHECK_CONCURRENCY: '0' })).toThrow(
      /QUEUE_CHECK_CONCURRENCY/,
    );
    expect(() => loadConfig({ ...tls, QUEUE_CHECK_CONCURRENCY: '4097' })).toThrow(
      /QUEUE_CHECK_CONCURRENCY/,
    );
  });

  it('takes the inbox settings at their bounds and refuses them past either', () => {
    const bounds = {
      INBOX_QUERY_TIMEOUT_MS: [100, 60_000],
      INBOX_CATCH_UP_BATCH: [1, 1000],
      DEVICE_CATCH_UP_RUN: [1, 1000],
      INBOX_DEDUPE_IDS: [10, 1_000_000],
      INBOX_REQUESTS_PER_S: [1, 10_000],
      INBOX_REQUEST_BURST: [1, 10_000],
    } as const;
    for (const [name, [low, high]] of Object.entries(bounds)) {
      expect(loadConfig({ ...tls, [name]: String(low) })[name as keyof typeof bounds]).toBe(low);
      expect(loadConfig({ ...tls, [name]: String(high) })[name as keyof typeof bounds]).toBe(high);
      expect(() => loadConfig({ ...tls, [name]: String(low - 1) })).toThrow(new RegExp(name));
      expect(() => loadConfig({ ...tls, [name]: String(high + 1) })).toThrow(new RegExp(name));
    }
  });

  it('names every bad variable in one error', () => {
    let error: unknown;
    try {
      loadConfig({
        ...tls,
        MAX_SOCKETS: '0',
        QUEUE_BATCH: '257',
        HEARTBEAT_INTERVAL_MS: 'soon',
        PORT: '70000',
      });
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const message = (error as Error).message;
    for (const name of ['MAX_SOCKETS', 'QUEUE_BATCH', 'HEARTBEAT_INTERVAL_MS', 'PORT'])
      expect(message).toContain(name);
  });

  it('keeps the connection-count refresh within half the TTL, at the edge and beyond', () => {
    const edge = loadConfig({
      ...tls,
      CONNECTION_COUNT_TTL_MS: '1000',
      CONNECTION_COUNT_REFRESH_MS: '500',
    });
    expect(edge.CONNECTION_COUNT_REFRESH_MS).toBe(500);
    expect(() =>
      loadConfig({ ...tls, CONNECTION_COUNT_TTL_MS: '1000', CONNECTION_COUNT_REFRESH_MS: '501' }),
    ).toThrow(/CONNECTION_COUNT_REFRESH_MS.*half of CONNECTION_COUNT_TTL_MS/);
    expect(() => loadConfig({ ...tls, CONNECTION_COUNT_TTL_MS: '999' })).toThrow(
      /CONNECTION_COUNT_TTL_MS/,
    );
  });

  it('requires TLS files unless TLS_DISABLED=true', () => {
    expect(() => loadConfig({})).toThrow(/TLS_CERT_FILE/);
    expect(loadConfig({ TLS_DISABLED: 'true' }).TLS_DISABLED).toBe(true);
  });
});

describe('LISTEN_BACKLOG', () => {
  it('defaults to 4096, takes 1 to 65535 and refuses the values past either edge', () => {
    expect(loadConfig({ ...tls }).LISTEN_BACKLOG).toBe(4096);
    expect(loadConfig({ ...tls, LISTEN_BACKLOG: '1' }).LISTEN_BACKLOG).toBe(1);
    expect(loadConfig({ ...tls, LISTEN_BACKLOG: '65535' }).LISTEN_BACKLOG).toBe(65_535);
    for (const bad of ['0', '65536', '2.5', 'lots']) {
      expect(() => loadConfig({ ...tls, LISTEN_BACKLOG: bad })).toThrow(/LISTEN_BACKLOG/);
    }
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

  it('takes the events-frame settings at their bounds, and clamps the events to what a list ack fits', () => {
    expect(loadConfig(tls)).toMatchObject({ QUEUE_FRAME_EVENTS: 64, QUEUE_FRAME_BYTES: 65_536 });
    for (const [name, low, high] of [
      ['QUEUE_FRAME_EVENTS', 1, 128],
      ['QUEUE_FRAME_BYTES', 1024, 16 * 1024 * 1024],
    ] as const) {
      expect(loadConfig({ ...tls, [name]: String(low) })[name]).toBe(low);
      expect(loadConfig({ ...tls, [name]: String(high) })[name]).toBe(high);
      expect(() => loadConfig({ ...tls, [name]: String(low - 1) })).toThrow(new RegExp(name));
      expect(() => loadConfig({ ...tls, [name]: String(high + 1) })).toThrow(new RegExp(name));
    }
    const clamps: unknown[] = [];
    const limits = (events: number, clientBytes: number) =>
      queueFrameLimits(
        {
          QUEUE_FRAME_EVENTS: events,
          QUEUE_FRAME_BYTES: 4096,
          MAX_CLIENT_FRAME_BYTES: clientBytes,
        },
        (message, fields) => clamps.push({ message, fields }),
      );
    // A list ack of n UUIDs is 22 + 39·n bytes: 128 of them are exactly 5014.
    const uuids = Array.from({ length: 128 }, () => crypto.randomUUID());
    expect(JSON.stringify({ type: 'ack', ids: uuids }).length).toBe(5014);
    expect(limits(128, 5014)).toEqual({ events: 128, bytes: 4096, ackBytes: 5014 });
    expect(clamps).toEqual([]);
    expect(limits(128, 5013).events).toBe(127);
    expect(clamps).toEqual([
      {
        message: expect.stringMatching(/QUEUE_FRAME_EVENTS.*MAX_CLIENT_FRAME_BYTES/),
        fields: { QUEUE_FRAME_EVENTS: 128, MAX_CLIENT_FRAME_BYTES: 5013, events: 127 },
      },
    ]);
    // The smallest client frame limit still lets 2 ids through; 1 is never clamped.
    expect(limits(128, 128).events).toBe(2);
    expect(limits(1, 128).events).toBe(1);
    expect(clamps).toHaveLength(2);
  });
});
