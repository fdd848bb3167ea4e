import { ensureKvBucket, type Logger } from '@herald/kit';
import { ensureQueueStream, migrateLegacyQueue, type QueueLayout } from '@herald/queue';
import type { JetStreamClient, JetStreamManager, KV, NatsConnection } from 'nats';
import { HEADER_HEADROOM_BYTES, type IngressConfig } from './config.js';
import { ensureIdempotencyBucket, IDEMPOTENCY_BUCKET } from './idempotency.js';
import { RATE_BUCKET } from './rate-limiter.js';

/** How long a dispatch waits for the shared rate state before limiting on this instance alone, ms. */
const RATE_KV_TIMEOUT_MS = 1000;

/** Refuses to start on a NATS server that cannot carry what this configuration promises. */
export function checkNatsServer(
  nc: NatsConnection,
  config: Pick<IngressConfig, 'PAYLOAD_LIMIT_BYTES' | 'QUEUE_MAX_BYTES'>,
): void {
  checkMaxPayload(nc, config);
  checkByteCapSupported(nc, config);
}

/**
 * Creates or updates the queue's partition streams (moving what a pre-partitioning single stream
 * still holds into them) and the idempotency and rate-limit buckets.
 */
export async function ensureJetStreamResources(
  nc: NatsConnection,
  js: JetStreamClient,
  jsm: JetStreamManager,
  layout: QueueLayout,
  config: Pick<
    IngressConfig,
    | 'QUEUE_MAX_PER_RECIPIENT'
    | 'QUEUE_MAX_BYTES'
    | 'QUEUE_MAX_MSG_BYTES'
    | 'QUEUE_FLOOR_TTL_DAYS'
    | 'DEVICE_POSITION_TTL_DAYS'
    | 'NATS_REPLICAS'
    | 'IDEMPOTENCY_TTL_MS'
    | 'QUEUE_SHRINK_LIMITS'
    | 'RATE_STATE_TTL_MS'
  >,
  logger: Logger,
): Promise<void> {
  const stream = await ensureQueueStream(jsm, {
    maxPerRecipient: config.QUEUE_MAX_PER_RECIPIENT,
    maxBytes: config.QUEUE_MAX_BYTES,
    maxMsgSize: config.QUEUE_MAX_MSG_BYTES,
    replicas: config.NATS_REPLICAS,
    // Same window as Idempotency-Key entries, so JetStream's dedup backs them up for as long.
    duplicateWindowMs: config.IDEMPOTENCY_TTL_MS,
    allowShrink: config.QUEUE_SHRINK_LIMITS,
    floorTtlDays: config.QUEUE_FLOOR_TTL_DAYS,
    deviceTtlDays: config.DEVICE_POSITION_TTL_DAYS,
    layout,
  }).catch((err: unknown) => {
    throw jetStreamError(`the queue streams (${layout.partitions} partitions)`, err);
  });
  if (stream.change !== 'unchanged')
    logger.info(
      { partitions: layout.partitions, change: stream.change },
      'queue partition streams ensured',
    );
  if (stream.kept.length > 0)
    logger.warn(
      { partitions: layout.partitions, kept: stream.kept },
      'kept the current queue caps: lowering them would delete stored events over the new cap (set QUEUE_SHRINK_LIMITS=true to apply anyway)',
    );
  if (stream.legacy) {
    // Before serving: a recipient connecting now finds their older events already in place.
    const moved = await migrateLegacyQueue(nc, layout, { logger });
    logger.info({ ...moved }, 'moved the single-stream queue into the partition streams');
  }
  await ensureIdempotencyBucket(js, jsm, {
    ttlMs: config.IDEMPOTENCY_TTL_MS,
    replicas: config.NATS_REPLICAS,
  }).catch((err: unknown) => {
    throw jetStreamError(`the idempotency bucket ${IDEMPOTENCY_BUCKET}`, err);
  });
  await ensureKvBucket(js, jsm, RATE_BUCKET, {
    ttlMs: config.RATE_STATE_TTL_MS,
    replicas: config.NATS_REPLICAS,
  }).catch((err: unknown) => {
    throw jetStreamError(`the rate-limit bucket ${RATE_BUCKET}`, err);
  });
}

/**
 * Runs `ensure` again while JetStream does not answer in time (a cluster still electing its
 * leaders, or creating R3 streams for two ingresses at once), for up to `waitMs`
 * (JETSTREAM_START_WAIT_MS), a second apart; any other failure, and the last timeout, is thrown.
 */
export async function whileJetStreamSilent<T>(
  ensure: () => Promise<T>,
  waitMs: number,
  logger: Logger,
  pauseMs = 1000,
): Promise<T> {
  const until = Date.now() + waitMs;
  for (let attempt = 1; ; attempt++) {
    try {
      return await ensure();
    } catch (err) {
      if (!jetStreamSilent(err)) throw err;
      if (Date.now() + pauseMs >= until) {
        throw new Error(
          `${(err as Error).message}; JetStream did not answer in time for ${waitMs} ms (JETSTREAM_START_WAIT_MS; attempts: ${attempt}): check that every NATS node is up and the cluster has a leader, or raise JETSTREAM_START_WAIT_MS`,
          { cause: err },
        );
      }
      logger.warn(
        { attempt, err: String(err) },
        'JetStream did not answer in time: trying again (JETSTREAM_START_WAIT_MS)',
      );
      await new Promise((r) => setTimeout(r, pauseMs));
    }
  }
}

/** A request JetStream left unanswered, or answered "temporarily unavailable" (10008). */
function jetStreamSilent(err: unknown): boolean {
  for (
    let e = err as { code?: unknown; api_error?: { err_code?: number }; cause?: unknown };
    e;
    e = e.cause as typeof e
  ) {
    if (e.code === 'TIMEOUT' || e.api_error?.err_code === 10008) return true;
  }
  return false;
}

/**
 * The shared rate-limit bucket, bound on first use and re-bound after a failure. A short timeout:
 * while the shared rate state does not answer, dispatches fall back to a per-instance limit
 * rather than wait.
 */
export function bindRateBucket(nc: NatsConnection): () => Promise<KV> {
  const rateJs = nc.jetstream({ timeout: RATE_KV_TIMEOUT_MS });
  let rateKv: Promise<KV> | undefined;
  return () => {
    if (!rateKv) {
      // bindOnly: start() created the bucket; binding costs no round trip per dispatch.
      rateKv = rateJs.views.kv(RATE_BUCKET, { bindOnly: true });
      rateKv.catch(() => {
        rateKv = undefined;
      });
    }
    return rateKv;
  };
}

/** A payload at the limit plus its headers must fit in one NATS message, or every push of it fails. */
function checkMaxPayload(
  nc: NatsConnection,
  config: Pick<IngressConfig, 'PAYLOAD_LIMIT_BYTES'>,
): void {
  const maxPayload = nc.info?.max_payload;
  const needed = config.PAYLOAD_LIMIT_BYTES + HEADER_HEADROOM_BYTES;
  if (maxPayload !== undefined && maxPayload < needed) {
    throw new Error(
      `NATS max_payload is ${maxPayload} bytes but PAYLOAD_LIMIT_BYTES + ${HEADER_HEADROOM_BYTES} needs ${needed}: lower PAYLOAD_LIMIT_BYTES or raise max_payload in the NATS server config`,
    );
  }
}

function jetStreamError(what: string, err: unknown): Error {
  const reason =
    (err as { code?: string }).code === '503'
      ? 'JetStream is not enabled on this NATS server (no responders)'
      : String(err);
  return new Error(
    `could not create or update ${what}: ${reason}; ingress needs JetStream (nats-server -js)`,
    { cause: err },
  );
}

/**
 * Before nats-server 2.10.5 a file-storage stream with `discard: new` near its byte cap drops
 * its oldest events instead of refusing the publish (nats-server#4771, reproduced on 2.9.10:
 * docs/architecture-history.md, "Retention: bounded storage"). A byte cap there would lose
 * undelivered events.
 */
function checkByteCapSupported(
  nc: NatsConnection,
  config: Pick<IngressConfig, 'QUEUE_MAX_BYTES'>,
): void {
  if (config.QUEUE_MAX_BYTES === -1) return;
  const version = nc.info?.version ?? '0.0.0';
  const [major = 0, minor = 0, patch = 0] = version.split(/[.-]/).map(Number);
  if (major * 1_000_000 + minor * 1000 + patch < 2_010_005) {
    throw new Error(
      `QUEUE_MAX_BYTES needs nats-server >= 2.10.5 (this one is ${version}): older servers drop the oldest queued events at the byte cap instead of refusing new ones; unset it (-1) or upgrade NATS`,
    );
  }
}
