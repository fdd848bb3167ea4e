import {
  AuthFailureEnv,
  CommonEnv,
  envBool,
  envInt,
  envPort,
  opsEnv,
  parseEnv,
  requireTls,
} from '@herald/kit';
import { STATUS_BATCH_RECORDS_MAX } from '@herald/proto';
import { DEFAULT_QUEUE_PARTITIONS, MAX_QUEUE_PARTITIONS } from '@herald/queue';
import { DEFAULT_STATUS_ACK_OPTIONS, DEFAULT_STATUS_BATCH_LIMITS } from '@herald/status-client';
import { z } from 'zod';
import { crossChecks, HEADER_HEADROOM_BYTES } from './config-checks.js';
import { PusherEnv } from './pusher/pusher-env.js';
import { RefusalEnv } from './refusals/refusal-env.js';

export { dispatchCeilingMs, fanoutRedeliveryMs, HEADER_HEADROOM_BYTES } from './config-checks.js';

const MIB = 1024 * 1024;

export const Env = CommonEnv.extend({
  /** Port of the HTTPS listener (dispatch, /healthz, /readyz status). Default 8443; 0 picks one. */
  PORT: envPort(8443),
  /** The ops listener (/metrics, /readyz with its checks): OPS_HOST (127.0.0.1), OPS_PORT (9443). */
  ...opsEnv(9443),
  /** Largest payload (its JSON text, UTF-8 bytes). Default 65536; at most 1 MiB. */
  PAYLOAD_LIMIT_BYTES: envInt(65_536, 1, MIB),
  /** Bytes a body may carry beyond the payload (recipient, api_key, client, whitespace). Default 16384. */
  BODY_OVERHEAD_BYTES: envInt(16_384, 256, MIB),
  /**
   * How long a live push waits for the edges to take it: a batch's, for them to say which
   * recipients they hold; a single dispatch's, for its request to reach them (it then waits
   * LIVE_PROOF_WAIT_MS more), ms. Default 1000.
   */
  LIVE_TIMEOUT_MS: envInt(1000, 10, 60_000),
  /**
   * How long a live push waits, once an edge holds its recipient, for that edge to prove the event
   * it wrote to sockets, ms. A batch's edge answers by half of it, queueing (answering 0 for) what
   * no socket proved by then; a single dispatch's edge answers 0 as soon as no socket can prove it
   * (its own LIVE_PROOF_TIMEOUT_MS, keep it below this); an edge that answers nothing gets its
   * events queued when it passes. Not a part of LIVE_TIMEOUT_MS: under load a written event's proof waits
   * behind the batches ahead of it, and giving up on it then delivers it twice (live, then from the
   * queue; docs/architecture-history.md, "No duplicates from overload"). Default 5000.
   */
  LIVE_PROOF_WAIT_MS: envInt(5000, 10, 60_000),
  /** How long a queue publish waits for JetStream's ack, ms. Default 5000. */
  PUBLISH_TIMEOUT_MS: envInt(5000, 100, 60_000),
  /**
   * How long the NATS connection may be without a server before dispatches and status lookups are
   * refused at once (503 unavailable, Retry-After: 1) instead of each waiting out AUTH_TIMEOUT_MS,
   * LIVE_TIMEOUT_MS and PUBLISH_TIMEOUT_MS in turn; within it they wait, since a reconnect carries
   * them through. 0 refuses from the moment the connection is lost, ms. Default 1000.
   */
  NATS_OUTAGE_GRACE_MS: envInt(1000, 0, 60_000),
  /** How long a key verification is reused, ms (revocations invalidate at once). Default 5000. */
  KEY_CACHE_TTL_MS: envInt(5000, 0, 300_000),
  /**
   * How long auth's refusal of a key (unknown, revoked, expired) is reused, ms, so a retried bad
   * key costs no lookup. Default 5000.
   */
  KEY_NEGATIVE_CACHE_TTL_MS: envInt(5000, 0, 300_000),
  ...AuthFailureEnv.shape,
  /** How long to wait for the auth service to verify a key, ms. Default 2000. */
  AUTH_TIMEOUT_MS: envInt(2000, 100, 60_000),
  /** How long an Idempotency-Key is remembered (and the queue's dedup window), ms. Default 120000. */
  IDEMPOTENCY_TTL_MS: envInt(120_000, 1000, 86_400_000),
  /**
   * Ceiling of stored events per recipient (the stream's max_msgs_per_subject); the next is refused
   * with 507. Delivered events count against it until retention deletes them, so it sits well above
   * the plans' own caps (which count undelivered events only). Default 100000.
   */
  QUEUE_MAX_PER_RECIPIENT: envInt(100_000, 1, 100_000_000),
  /**
   * Most recipients the offline queue holds events for at once (the partitions' subjects): a new
   * recipient past it is refused with 507 queue_recipients_full, while recipients who already
   * hold events are still queued for. Each costs every NATS node memory while waiting, and a
   * durable consumer on each node of a cluster once it connects, until retention's run (sizes:
   * docs/operations.md, "The ceiling").
   * Default 50000: every one of them draining at once fits nodes giving JetStream 4 GiB.
   */
  QUEUE_MAX_RECIPIENTS: envInt(50_000, 1, 100_000_000),
  /**
   * Lower QUEUE_MAX_PER_RECIPIENT or QUEUE_MAX_BYTES on an existing stream even though the server
   * then deletes the oldest stored events over the new cap. Default false: a lower value is
   * ignored with a warning and the current cap kept.
   */
  QUEUE_SHRINK_LIMITS: envBool(false),
  /**
   * Streams the offline queue is partitioned into, recipients spread over them by a stable hash
   * (lib/queue QueueLayout). Every service that touches the queue (ingress-api, socket-edge,
   * retention) must run with the same value; a service started with another refuses to start.
   * Fixed once events are stored: changing it is not supported. Default 16.
   */
  QUEUE_PARTITIONS: envInt(DEFAULT_QUEUE_PARTITIONS, 1, MAX_QUEUE_PARTITIONS),
  /** Byte cap of each queue partition stream (the queue's total is this × QUEUE_PARTITIONS); -1 for none. Default -1. */
  QUEUE_MAX_BYTES: envInt(-1, -1).refine(
    (v) => v === -1 || v > 0,
    'must be -1 (no cap) or a positive byte count',
  ),
  /** Largest queued message (payload + headers). Default PAYLOAD_LIMIT_BYTES + 1024. */
  QUEUE_MAX_MSG_BYTES: z.coerce
    .number({ error: 'must be an integer byte count' })
    .int('must be an integer byte count')
    .positive('must be a positive byte count')
    .optional(),
  /**
   * Days a recipient's recorded ack floor (the queue's floor bucket, written by the edges for
   * memory-state consumers) is kept after its last write; applies when the bucket is created.
   * Keep it above the retention interval. Default 30.
   */
  QUEUE_FLOOR_TTL_DAYS: envInt(30, 1, 3650),
  /**
   * Days a device's position in its recipient's queue (bucket herald_device_positions, written by
   * the edges) is kept after its last write; applies when the bucket is created. Keep it above the
   * retention interval: a device whose position expired reads again what is still stored. Default 30.
   */
  DEVICE_POSITION_TTL_DAYS: envInt(30, 1, 3650),
  /**
   * How long start keeps trying to create or update the queue streams and buckets while JetStream
   * does not answer in time (a cluster electing leaders, another ingress creating the same R3
   * streams), ms; then ingress exits saying so. Default 30000; 0: one attempt.
   */
  JETSTREAM_START_WAIT_MS: envInt(30_000, 0, 600_000),
  /** Replicas of the queue stream and the KV buckets: 1 on one server, 3 in a cluster. */
  NATS_REPLICAS: envInt(1, 1, 5),
  /** How long dispatch tokens leased from a key's shared bucket stay usable (unused ones are forfeited), ms. Default 1000. */
  RATE_LEASE_MS: envInt(1000, 10, 60_000),
  /** A lease takes at most this many ms worth of the key's dispatch_rate (at least 1 token). Default 100. */
  RATE_LEASE_BATCH_MS: envInt(100, 1, 10_000),
  /**
   * TTL of a key's shared token bucket since its last use, ms; an expired one starts full. Must
   * exceed the longest dispatch_burst / dispatch_rate of the plan catalogue. Default 600000.
   */
  RATE_STATE_TTL_MS: envInt(600_000, 1000, 86_400_000),
  /**
   * How long an exact queue count from a subject scan is reused for a recipient near its plan's
   * cap, and the count of recipients the queue holds (QUEUE_MAX_RECIPIENTS), ms. Default 1000.
   */
  QUEUE_DEPTH_SCAN_CACHE_MS: envInt(1000, 0, 60_000),
  /** Most events one `POST /notify/batch` (or `rt.dispatch.batch.<account>`) may carry. Default 1000. */
  BATCH_MAX_EVENTS: envInt(1000, 1, 100_000),
  /** Most bytes a batch body may have (NATS: keep it within the server's max_payload). Default 1048576. */
  BATCH_MAX_BYTES: envInt(MIB, 256, 64 * MIB),
  /** How many of a batch's events are delivered at once (live pushes, queue publishes). Default 64. */
  BATCH_CONCURRENCY: envInt(64, 1, 10_000),
  /**
   * How a batch's events are pushed live: `grouped` asks every edge once which recipients it holds
   * and sends each holding edge one message with their events (two messages per batch); `per_event`
   * sends one live request per event, as a single dispatch does. Default grouped.
   */
  BATCH_LIVE: z
    .enum(['grouped', 'per_event'], { error: 'must be grouped or per_event' })
    .default('grouped'),
  /** Most event ids one `POST /events/status` may name. Default 100. */
  STATUS_IDS_MAX: envInt(100, 1, 1000),
  /** How long `POST /events/status` waits for the status service, ms. Default 2000. */
  STATUS_TIMEOUT_MS: envInt(2000, 100, 60_000),
  /**
   * Inbox mode: how long the inbox store (the status service) may take to keep an inbox key's
   * events before the sender is answered, and to answer `/inbox/*`, ms. Past it: 503. Default 2000.
   */
  INBOX_TIMEOUT_MS: envInt(2000, 100, 60_000),
  /**
   * Push subscriptions (issue 40): how long `/push/*` waits for the status service, which keeps
   * subscriptions and VAPID keys, ms. Past it: 503. Default 2000.
   */
  PUSH_TIMEOUT_MS: envInt(2000, 100, 60_000),
  /**
   * Most bytes of a `POST /push/subscriptions` body: a key, a recipient, a token and one browser
   * subscription (an endpoint of at most 2048 characters and two keys). Default 8192; 1024..65536.
   */
  PUSH_SUBSCRIPTION_MAX_BYTES: envInt(8192, 1024, 65_536),
  /**
   * Topics (issue 44): how long a topic route, a topic event's snapshot and a fan-out worker's
   * chunk read wait for the status service, which keeps the membership, ms. Past it: 503.
   * Default 5000.
   */
  TOPIC_TIMEOUT_MS: envInt(5000, 100, 60_000),
  /**
   * Most bytes of a `PUT`/`DELETE …/members` body: 10,000 recipients of 36 characters, quoted,
   * and the key. Default 524288.
   */
  TOPIC_MEMBERS_MAX_BYTES: envInt(524_288, 4096, 4_194_304),
  /** Members per fan-out work item (one JetStream message, acked once all its copies are). Default 500. */
  FANOUT_CHUNK_SIZE: envInt(500, 1, 10_000),
  /**
   * Chunks this instance's fan-out works on at once. With FANOUT_COPY_CONCURRENCY, the bound on
   * what a fan-out takes from direct dispatch: at most the product of copies in flight per
   * instance. Default 2.
   */
  FANOUT_WORKERS: envInt(2, 0, 64),
  /** Copies of one chunk in flight at once (each a direct dispatch's deliver step). Default 16. */
  FANOUT_COPY_CONCURRENCY: envInt(16, 1, 1024),
  /**
   * Most copies a second this instance's fan-out places (live or queued), over all its workers:
   * the share of the core a topic leaves to direct dispatch (topics/fanout-pacer.ts; figure 10
   * measures /notify's p99 during a 100,000-member fan-out). 0 = no pace. Default 1000.
   */
  FANOUT_COPIES_PER_S: envInt(1000, 0, 1_000_000),
  /**
   * How a chunk's copies are pushed live: `grouped` asks every edge once per group of the chunk
   * (FANOUT_LIVE_GROUP) which of its members it holds and sends each holding edge their copies in one message, every copy's proof
   * awaited at once (the window of copies awaiting a socket's proof is a group of the chunk,
   * FANOUT_LIVE_GROUP); `per_copy` pushes each copy on its own, FANOUT_COPY_CONCURRENCY at once, as
   * a single dispatch does. Either way a copy no socket proved is queued. Inbox keys' copies go
   * per copy (each is kept before it is pushed). Default grouped.
   */
  FANOUT_LIVE: z
    .enum(['grouped', 'per_copy'], { error: 'must be grouped or per_copy' })
    .default('grouped'),
  /**
   * With FANOUT_LIVE=grouped, the copies of a chunk pushed live in one message to each holding
   * edge; the next group goes once this one's copies are placed, each at the pace
   * (FANOUT_COPIES_PER_S). Default 50.
   */
  FANOUT_LIVE_GROUP: envInt(50, 1, 10_000),
  /**
   * How long a chunk may go unacked before JetStream gives it to another worker (a killed
   * instance's chunk is redelivered after this), ms; a live worker extends it while it works.
   * Default 30000.
   */
  FANOUT_ACK_WAIT_MS: envInt(30_000, 1000, 600_000),
  /** The fan-out stream's storage ceiling, bytes (HERALD_FANOUT). Default 1 GiB. */
  FANOUT_STREAM_MAX_BYTES: envInt(1024 ** 3, 1024 * 1024, 1024 ** 4),
  /**
   * How `/push/*` judges the recipient token of a key that requires one, as the socket edge does
   * (its own TOKEN_MAX_LIFETIME_MS and TOKEN_CLOCK_SKEW_MS; keep them equal): the longest a token
   * may live, ms (default 24 h; 1 minute..7 days), and the clock difference tolerated on its
   * exp, nbf and iat, ms (default 30000; 0..5 minutes).
   */
  TOKEN_MAX_LIFETIME_MS: envInt(24 * 3600_000, 60_000, 7 * 24 * 3600_000),
  TOKEN_CLOCK_SKEW_MS: envInt(30_000, 0, 300_000),
  /**
   * Most status records in one NATS message: the records of one event-loop turn leave as one
   * `StatusBatch` per account (proto/status.ts). Default 256; 1..1000 (what the writer takes).
   */
  STATUS_PUBLISH_MAX_RECORDS: envInt(
    DEFAULT_STATUS_BATCH_LIMITS.maxRecords,
    1,
    STATUS_BATCH_RECORDS_MAX,
  ),
  /**
   * Most bytes of one status message's payload (a single larger record still leaves, alone).
   * Default 65536; 1024..1 MiB (NATS's default max_payload).
   */
  STATUS_PUBLISH_MAX_BYTES: envInt(DEFAULT_STATUS_BATCH_LIMITS.maxBytes, 1024, MIB),
  /**
   * How long a status message waits for the status stream's acknowledgement before it is
   * published again, ms; each further attempt waits twice as long, up to 8 times this. Also how
   * long shutdown waits for the last ones (at most a quarter of SHUTDOWN_TIMEOUT_MS). Default 2000.
   */
  STATUS_ACK_TIMEOUT_MS: envInt(DEFAULT_STATUS_ACK_OPTIONS.ackTimeoutMs, 100, 60_000),
  /**
   * Most bytes of status messages held unacknowledged (the stream without quorum, NATS
   * unreachable); past it the oldest are dropped, their records lost (counted,
   * herald_status_messages_dropped_total). Default 16 MiB; 64 KiB..1 GiB.
   */
  STATUS_PENDING_MAX_BYTES: envInt(
    DEFAULT_STATUS_ACK_OPTIONS.maxPendingBytes,
    64 * 1024,
    1024 * MIB,
  ),
  /** The Pusher HTTP API's limits (issue 41): PUSHER_MAX_*, PUSHER_TIMESTAMP_SKEW_S. */
  ...PusherEnv,
  ...RefusalEnv,
}).superRefine(
  (env, ctx) => {
    requireTls(env, ctx);
    crossChecks(env, ctx);
  },
  // Run even when a variable is already bad, so one message lists every problem at once.
  { when: () => true },
);
export type Env = z.infer<typeof Env>;

/** The parsed configuration, with QUEUE_MAX_MSG_BYTES resolved. */
export type IngressConfig = Omit<Env, 'QUEUE_MAX_MSG_BYTES'> & { QUEUE_MAX_MSG_BYTES: number };

export function loadConfig(env: Record<string, string | undefined> = process.env): IngressConfig {
  const parsed = parseEnv('ingress-api', Env, env);
  return {
    ...parsed,
    QUEUE_MAX_MSG_BYTES:
      parsed.QUEUE_MAX_MSG_BYTES ?? parsed.PAYLOAD_LIMIT_BYTES + HEADER_HEADROOM_BYTES,
  };
}
