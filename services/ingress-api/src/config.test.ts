import { ConfigError } from '@herald/kit';
import { describe, expect, it } from 'vitest';
import { loadConfig } from './config.js';

const base = { TLS_DISABLED: 'true' };
const load = (env: Record<string, string>) => loadConfig({ ...base, ...env });
const problems = (env: Record<string, string>) => {
  try {
    loadConfig(env);
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return (err as Error).message;
  }
  throw new Error('expected a ConfigError');
};

describe('loadConfig', () => {
  it('has the documented defaults', () => {
    expect(load({})).toMatchObject({
      PORT: 8443,
      PAYLOAD_LIMIT_BYTES: 65_536,
      BODY_OVERHEAD_BYTES: 16_384,
      LIVE_TIMEOUT_MS: 1000,
      LIVE_PROOF_WAIT_MS: 5000,
      PUBLISH_TIMEOUT_MS: 5000,
      KEY_CACHE_TTL_MS: 5000,
      AUTH_TIMEOUT_MS: 2000,
      IDEMPOTENCY_TTL_MS: 120_000,
      QUEUE_MAX_PER_RECIPIENT: 100_000,
      QUEUE_MAX_RECIPIENTS: 50_000,
      JETSTREAM_START_WAIT_MS: 30_000,
      QUEUE_SHRINK_LIMITS: false,
      QUEUE_MAX_BYTES: -1,
      QUEUE_MAX_MSG_BYTES: 65_536 + 1024,
      QUEUE_FLOOR_TTL_DAYS: 30,
      DEVICE_POSITION_TTL_DAYS: 30,
      NATS_REPLICAS: 1,
      RATE_LEASE_MS: 1000,
      RATE_LEASE_BATCH_MS: 100,
      RATE_STATE_TTL_MS: 600_000,
      QUEUE_DEPTH_SCAN_CACHE_MS: 1000,
      STATUS_PUBLISH_MAX_RECORDS: 256,
      STATUS_PUBLISH_MAX_BYTES: 65_536,
      STATUS_ACK_TIMEOUT_MS: 2000,
      STATUS_PENDING_MAX_BYTES: 16 * 1024 * 1024,
    });
  });

  it('bounds the status acks to 100..60000 ms and 64 KiB..1 GiB held, at either edge', () => {
    expect(load({ STATUS_ACK_TIMEOUT_MS: '100', STATUS_PENDING_MAX_BYTES: '65536' })).toMatchObject(
      { STATUS_ACK_TIMEOUT_MS: 100, STATUS_PENDING_MAX_BYTES: 65_536 },
    );
    expect(
      load({ STATUS_ACK_TIMEOUT_MS: '60000', STATUS_PENDING_MAX_BYTES: '1073741824' }),
    ).toMatchObject({ STATUS_ACK_TIMEOUT_MS: 60_000, STATUS_PENDING_MAX_BYTES: 1_073_741_824 });
    const low = problems({
      ...base,
      STATUS_ACK_TIMEOUT_MS: '99',
      STATUS_PENDING_MAX_BYTES: '65535',
    });
    expect(low).toContain('STATUS_ACK_TIMEOUT_MS ("99"): must be at least 100');
    expect(low).toContain('STATUS_PENDING_MAX_BYTES ("65535"): must be at least 65536');
    const high = problems({
      ...base,
      STATUS_ACK_TIMEOUT_MS: '60001',
      STATUS_PENDING_MAX_BYTES: '1073741825',
    });
    expect(high).toContain('STATUS_ACK_TIMEOUT_MS ("60001"): must be at most 60000');
    expect(high).toContain('STATUS_PENDING_MAX_BYTES ("1073741825"): must be at most 1073741824');
  });

  it('bounds the status message to 1..1000 records and 1024..1 MiB bytes, at either edge', () => {
    expect(
      load({ STATUS_PUBLISH_MAX_RECORDS: '1', STATUS_PUBLISH_MAX_BYTES: '1024' }),
    ).toMatchObject({ STATUS_PUBLISH_MAX_RECORDS: 1, STATUS_PUBLISH_MAX_BYTES: 1024 });
    expect(
      load({ STATUS_PUBLISH_MAX_RECORDS: '1000', STATUS_PUBLISH_MAX_BYTES: '1048576' }),
    ).toMatchObject({ STATUS_PUBLISH_MAX_RECORDS: 1000, STATUS_PUBLISH_MAX_BYTES: 1_048_576 });
    const low = problems({
      ...base,
      STATUS_PUBLISH_MAX_RECORDS: '0',
      STATUS_PUBLISH_MAX_BYTES: '1023',
    });
    expect(low).toContain('STATUS_PUBLISH_MAX_RECORDS ("0"): must be at least 1');
    expect(low).toContain('STATUS_PUBLISH_MAX_BYTES ("1023"): must be at least 1024');
    const high = problems({
      ...base,
      STATUS_PUBLISH_MAX_RECORDS: '1001',
      STATUS_PUBLISH_MAX_BYTES: '1048577',
    });
    expect(high).toContain('STATUS_PUBLISH_MAX_RECORDS ("1001"): must be at most 1000');
    expect(high).toContain('STATUS_PUBLISH_MAX_BYTES ("1048577"): must be at most 1048576');
  });

  it('bounds the rate-limit and queue-depth settings, naming the variable', () => {
    const low = load({
      RATE_LEASE_MS: '10',
      RATE_LEASE_BATCH_MS: '1',
      RATE_STATE_TTL_MS: '1000',
      QUEUE_DEPTH_SCAN_CACHE_MS: '0',
    });
    expect(low).toMatchObject({
      RATE_LEASE_MS: 10,
      RATE_LEASE_BATCH_MS: 1,
      RATE_STATE_TTL_MS: 1000,
    });
    const message = problems({
      ...base,
      RATE_LEASE_MS: '9',
      RATE_LEASE_BATCH_MS: '0',
      RATE_STATE_TTL_MS: '999',
      QUEUE_DEPTH_SCAN_CACHE_MS: '60001',
    });
    for (const name of [
      'RATE_LEASE_MS ("9")',
      'RATE_LEASE_BATCH_MS ("0")',
      'RATE_STATE_TTL_MS ("999")',
      'QUEUE_DEPTH_SCAN_CACHE_MS ("60001")',
    ])
      expect(message).toContain(name);
  });

  it('bounds the push routes’ settings, naming the variable at either edge (issue 40)', () => {
    expect(load({})).toMatchObject({
      PUSH_TIMEOUT_MS: 2000,
      PUSH_SUBSCRIPTION_MAX_BYTES: 8192,
      TOKEN_MAX_LIFETIME_MS: 24 * 3600_000,
      TOKEN_CLOCK_SKEW_MS: 30_000,
    });
    for (const [name, low, high] of [
      ['PUSH_TIMEOUT_MS', 100, 60_000],
      ['PUSH_SUBSCRIPTION_MAX_BYTES', 1024, 65_536],
      ['TOKEN_MAX_LIFETIME_MS', 60_000, 7 * 24 * 3600_000],
      ['TOKEN_CLOCK_SKEW_MS', 0, 300_000],
    ] as const) {
      expect(load({ [name]: String(low) })[name]).toBe(low);
      expect(load({ [name]: String(high) })[name]).toBe(high);
      // kit hides the value of a variable named like a secret (TOKEN_*): the name and bound stay.
      expect(problems({ ...base, [name]: String(low - 1) })).toMatch(
        new RegExp(`${name} \\(.*\\): must be at least ${low}`),
      );
      expect(problems({ ...base, [name]: String(high + 1) })).toMatch(
        new RegExp(`${name} \\(.*\\): must be at most ${high}`),
      );
    }
  });

  it('bounds QUEUE_MAX_RECIPIENTS to 1..100000000, naming the variable at either edge', () => {
    expect(load({ QUEUE_MAX_RECIPIENTS: '1' }).QUEUE_MAX_RECIPIENTS).toBe(1);
    expect(load({ QUEUE_MAX_RECIPIENTS: '100000000' }).QUEUE_MAX_RECIPIENTS).toBe(100_000_000);
    expect(problems({ ...base, QUEUE_MAX_RECIPIENTS: '0' })).toContain(
      'QUEUE_MAX_RECIPIENTS ("0")',
    );
    expect(problems({ ...base, QUEUE_MAX_RECIPIENTS: '100000001' })).toContain(
      'QUEUE_MAX_RECIPIENTS ("100000001")',
    );
  });

  it('bounds JETSTREAM_START_WAIT_MS to 0..600000, naming the variable past either edge', () => {
    expect(load({ JETSTREAM_START_WAIT_MS: '0' }).JETSTREAM_START_WAIT_MS).toBe(0);
    expect(load({ JETSTREAM_START_WAIT_MS: '600000' }).JETSTREAM_START_WAIT_MS).toBe(600_000);
    expect(problems({ ...base, JETSTREAM_START_WAIT_MS: '-1' })).toContain(
      'JETSTREAM_START_WAIT_MS ("-1")',
    );
    expect(problems({ ...base, JETSTREAM_START_WAIT_MS: '600001' })).toContain(
      'JETSTREAM_START_WAIT_MS ("600001")',
    );
  });

  it('bounds QUEUE_FLOOR_TTL_DAYS to 1..3650, naming the variable at either edge', () => {
    expect(load({ QUEUE_FLOOR_TTL_DAYS: '1' }).QUEUE_FLOOR_TTL_DAYS).toBe(1);
    expect(load({ QUEUE_FLOOR_TTL_DAYS: '3650' }).QUEUE_FLOOR_TTL_DAYS).toBe(3650);
    expect(problems({ ...base, QUEUE_FLOOR_TTL_DAYS: '0' })).toContain(
      'QUEUE_FLOOR_TTL_DAYS ("0")',
    );
    expect(problems({ ...base, QUEUE_FLOOR_TTL_DAYS: '3651' })).toContain(
      'QUEUE_FLOOR_TTL_DAYS ("3651")',
    );
  });

  it('bounds DEVICE_POSITION_TTL_DAYS to 1..3650, naming the variable at either edge', () => {
    expect(load({ DEVICE_POSITION_TTL_DAYS: '1' }).DEVICE_POSITION_TTL_DAYS).toBe(1);
    expect(load({ DEVICE_POSITION_TTL_DAYS: '3650' }).DEVICE_POSITION_TTL_DAYS).toBe(3650);
    for (const bad of ['0', '3651'])
      expect(problems({ ...base, DEVICE_POSITION_TTL_DAYS: bad })).toContain(
        `DEVICE_POSITION_TTL_DAYS ("${bad}")`,
      );
  });

  it('derives QUEUE_MAX_MSG_BYTES from PAYLOAD_LIMIT_BYTES, or takes an explicit one', () => {
    expect(load({ PAYLOAD_LIMIT_BYTES: '1000' }).QUEUE_MAX_MSG_BYTES).toBe(2024);
    expect(
      load({ PAYLOAD_LIMIT_BYTES: '1000', QUEUE_MAX_MSG_BYTES: '2024' }).QUEUE_MAX_MSG_BYTES,
    ).toBe(2024);
    expect(problems({ ...base, PAYLOAD_LIMIT_BYTES: '1000', QUEUE_MAX_MSG_BYTES: '2023' })).toMatch(
      /QUEUE_MAX_MSG_BYTES \("2023"\): must be at least PAYLOAD_LIMIT_BYTES \+ 1024 \(2024\)/,
    );
  });

  it('bounds PAYLOAD_LIMIT_BYTES to 1..1 MiB', () => {
    expect(load({ PAYLOAD_LIMIT_BYTES: '1' }).PAYLOAD_LIMIT_BYTES).toBe(1);
    expect(load({ PAYLOAD_LIMIT_BYTES: '1048576' }).PAYLOAD_LIMIT_BYTES).toBe(1_048_576);
    expect(problems({ ...base, PAYLOAD_LIMIT_BYTES: '0' })).toContain(
      'PAYLOAD_LIMIT_BYTES ("0"): must be at least 1',
    );
    expect(problems({ ...base, PAYLOAD_LIMIT_BYTES: '1048577' })).toContain(
      'must be at most 1048576',
    );
  });

  it('takes QUEUE_MAX_BYTES as -1 or a positive count, never 0', () => {
    expect(load({ QUEUE_MAX_BYTES: '1048576' }).QUEUE_MAX_BYTES).toBe(1_048_576);
    expect(problems({ ...base, QUEUE_MAX_BYTES: '0' })).toContain('QUEUE_MAX_BYTES');
  });

  it('needs IDEMPOTENCY_TTL_MS to outlast a dispatch', () => {
    expect(problems({ ...base, IDEMPOTENCY_TTL_MS: '11000' })).toContain(
      'IDEMPOTENCY_TTL_MS ("11000"): must exceed LIVE_TIMEOUT_MS + LIVE_PROOF_WAIT_MS + PUBLISH_TIMEOUT_MS (11000)',
    );
    // Past it, the fan-out's rule (below) is the one that binds.
    expect(problems({ ...base, IDEMPOTENCY_TTL_MS: '11001' })).not.toContain('(11000)');
  });

  it('needs IDEMPOTENCY_TTL_MS to outlast a killed fan-out worker’s chunk coming back', () => {
    // Defaults: FANOUT_ACK_WAIT_MS 30000 + a dispatch's 11000.
    const message =
      'IDEMPOTENCY_TTL_MS ("41000"): must exceed FANOUT_ACK_WAIT_MS + LIVE_TIMEOUT_MS + LIVE_PROOF_WAIT_MS + PUBLISH_TIMEOUT_MS (41000)';
    const equal = problems({ ...base, IDEMPOTENCY_TTL_MS: '41000' });
    expect(equal).toContain(message);
    expect(equal).toContain('raise IDEMPOTENCY_TTL_MS or lower FANOUT_ACK_WAIT_MS');
    expect(load({ IDEMPOTENCY_TTL_MS: '41001' }).IDEMPOTENCY_TTL_MS).toBe(41_001);
    // The other side of the edge: the ack wait one ms over what the window covers.
    expect(problems({ ...base, FANOUT_ACK_WAIT_MS: '109000' })).toContain(
      'IDEMPOTENCY_TTL_MS (unset): must exceed FANOUT_ACK_WAIT_MS + LIVE_TIMEOUT_MS + LIVE_PROOF_WAIT_MS + PUBLISH_TIMEOUT_MS (120000)',
    );
    expect(load({ FANOUT_ACK_WAIT_MS: '108999' }).FANOUT_ACK_WAIT_MS).toBe(108_999);
  });

  it('takes FANOUT_LIVE as grouped (the default) or per_copy, naming the choices otherwise', () => {
    expect(load({}).FANOUT_LIVE).toBe('grouped');
    expect(load({ FANOUT_LIVE: 'per_copy' }).FANOUT_LIVE).toBe('per_copy');
    expect(problems({ ...base, FANOUT_LIVE: 'batched' })).toContain(
      'FANOUT_LIVE ("batched"): must be grouped or per_copy',
    );
  });

  it("groups a chunk's live copies 50 at a time by default, 1 to 10000, naming the variable past either edge", () => {
    expect(load({}).FANOUT_LIVE_GROUP).toBe(50);
    expect(load({ FANOUT_LIVE_GROUP: '1' }).FANOUT_LIVE_GROUP).toBe(1);
    expect(load({ FANOUT_LIVE_GROUP: '10000' }).FANOUT_LIVE_GROUP).toBe(10_000);
    expect(problems({ ...base, FANOUT_LIVE_GROUP: '0' })).toContain('FANOUT_LIVE_GROUP ("0")');
    expect(problems({ ...base, FANOUT_LIVE_GROUP: '10001' })).toContain(
      'FANOUT_LIVE_GROUP ("10001")',
    );
  });

  it('paces the fan-out at 1000 copies/s by default, 0 (no pace) to 1000000, naming the variable past either edge', () => {
    expect(load({}).FANOUT_COPIES_PER_S).toBe(1000);
    expect(load({ FANOUT_COPIES_PER_S: '0' }).FANOUT_COPIES_PER_S).toBe(0);
    expect(load({ FANOUT_COPIES_PER_S: '1000000' }).FANOUT_COPIES_PER_S).toBe(1_000_000);
    expect(problems({ ...base, FANOUT_COPIES_PER_S: '-1' })).toContain(
      'FANOUT_COPIES_PER_S ("-1")',
    );
    expect(problems({ ...base, FANOUT_COPIES_PER_S: '1000001' })).toContain(
      'FANOUT_COPIES_PER_S ("1000001")',
    );
  });

  it('bounds LIVE_PROOF_WAIT_MS at 10 ms and 60 s', () => {
    expect(load({ LIVE_PROOF_WAIT_MS: '10' }).LIVE_PROOF_WAIT_MS).toBe(10);
    expect(load({ LIVE_PROOF_WAIT_MS: '60000' }).LIVE_PROOF_WAIT_MS).toBe(60_000);
    expect(problems({ ...base, LIVE_PROOF_WAIT_MS: '9' })).toContain('LIVE_PROOF_WAIT_MS');
    expect(problems({ ...base, LIVE_PROOF_WAIT_MS: '60001' })).toContain('LIVE_PROOF_WAIT_MS');
  });

  it('requires TLS files unless TLS_DISABLED, and lists every problem in one message', () => {
    const message = problems({ PAYLOAD_LIMIT_BYTES: 'lots', PORT: '70000' });
    expect(message).toContain('PAYLOAD_LIMIT_BYTES');
    expect(message).toContain('PORT');
    expect(message).toContain('TLS_CERT_FILE');
    expect(message).toContain('TLS_KEY_FILE');
  });
});

describe('QUEUE_PARTITIONS', () => {
  it('defaults to 16, takes 1 to 256 and refuses the values past either edge', () => {
    expect(loadConfig({ ...base }).QUEUE_PARTITIONS).toBe(16);
    expect(loadConfig({ ...base, QUEUE_PARTITIONS: '1' }).QUEUE_PARTITIONS).toBe(1);
    expect(loadConfig({ ...base, QUEUE_PARTITIONS: '256' }).QUEUE_PARTITIONS).toBe(256);
    for (const bad of ['0', '257', '2.5', 'many']) {
      expect(() => loadConfig({ ...base, QUEUE_PARTITIONS: bad })).toThrow(/QUEUE_PARTITIONS/);
    }
  });
});
