import { isStreamNameInUse, isStreamNotFound } from '@herald/nats';
import type { JetStreamManager, StreamConfig, StreamInfo } from 'nats';
import { ensureQueueFloorBucket } from './ack-floors.js';
import { ensureDevicePositionBucket } from './device-positions.js';
import { retireLegacyQueueStream } from './legacy-queue.js';
import { QueueLayout } from './queue-layout.js';
import { type QueueStreamOptions, queueStreamConfig } from './stream-config.js';

export type QueueStreamChange = 'created' | 'updated' | 'unchanged';

/**
 * Caps whose lowering on a live stream makes the server delete stored events at once, oldest
 * first (docs/architecture-history.md, "Retention: bounded storage"). Undelivered events must
 * never vanish, so these only go up unless the caller allows it.
 */
const SHRINKING = ['max_msgs_per_subject', 'max_bytes'] as const;

export interface EnsureQueueStreamOptions extends QueueStreamOptions {
  /**
   * Apply a lower per-recipient or byte cap even though the server then deletes the oldest
   * stored events over it. Default false: a lower cap is kept at its current value and reported
   * in `kept`.
   */
  allowShrink?: boolean;
  /** The partitioned layout (QUEUE_PARTITIONS). Default: the default layout. */
  layout?: QueueLayout;
  /** Days a recorded ack floor is kept (ack-floors.ts); applies when the bucket is created. Default 30. */
  floorTtlDays?: number;
  /** Days a device position is kept (device-positions.ts); applies when the bucket is created. Default 30. */
  deviceTtlDays?: number;
}

export interface EnsuredQueueStreams {
  /** Partition 0's stream info (every partition has the same limits). */
  info: StreamInfo;
  /** Every partition's stream info, by partition. */
  infos: StreamInfo[];
  /** 'created' or 'updated' when any partition was; else 'unchanged'. */
  change: QueueStreamChange;
  /** Caps kept at their current (higher) value on some partition instead of lowered. */
  kept: string[];
  /** The pre-partitioning stream exists (retired: it captures nothing): run migrateLegacyQueue. */
  legacy: boolean;
}

/**
 * Limits an operator may change on a running stream; retention and storage cannot change in place,
 * and subjects are the layout's, checked apart.
 */
const MUTABLE = [
  'discard',
  'discard_new_per_subject',
  'max_msgs_per_subject',
  'max_bytes',
  'max_msg_size',
  'max_age',
  'num_replicas',
  'duplicate_window',
  'allow_direct',
] as const;

/**
 * Creates the offline queue's partition streams, or brings existing ones' limits in line with
 * `opts` (a changed QUEUE_MAX_PER_RECIPIENT takes effect on restart). Safe to call from several
 * instances at once: a lost creation race falls back to comparing and updating.
 *
 * The pre-partitioning stream `HERALD_QUEUE` captures `rt.queue.>`, which overlaps every partition:
 * it is retired first (made to capture nothing; its events stay for {@link migrateLegacyQueue}).
 * A partition stream capturing other slots than the layout's means QUEUE_PARTITIONS changed under
 * stored events: refused, since moving them between partitions is not built.
 */
export async function ensureQueueStream(
  jsm: JetStreamManager,
  opts: EnsureQueueStreamOptions = {},
): Promise<EnsuredQueueStreams> {
  const layout = opts.layout ?? new QueueLayout();
  const legacy = await retireLegacyQueueStream(jsm);
  const results: { info: StreamInfo; change: QueueStreamChange; kept: string[] }[] = [];
  // One at a time: sixteen stream creations at once are a burst of JetStream API calls on a
  // cluster's meta leader, and start-up is not in a hurry.
  for (let p = 0; p < layout.partitions; p++)
    results.push(await ensurePartition(jsm, layout, p, opts));
  await ensureQueueFloorBucket(jsm.jetstream(), {
    ...(opts.replicas === undefined ? {} : { replicas: opts.replicas }),
    ...(opts.floorTtlDays === undefined ? {} : { ttlDays: opts.floorTtlDays }),
  });
  await ensureDevicePositionBucket(jsm.jetstream(), {
    ...(opts.replicas === undefined ? {} : { replicas: opts.replicas }),
    ...(opts.deviceTtlDays === undefined ? {} : { ttlDays: opts.deviceTtlDays }),
  });
  const changes = new Set(results.map((r) => r.change));
  return {
    info: (results[0] as { info: StreamInfo }).info,
    infos: results.map((r) => r.info),
    change: changes.has('created') ? 'created' : changes.has('updated') ? 'updated' : 'unchanged',
    kept: [...new Set(results.flatMap((r) => r.kept))],
    legacy,
  };
}

/**
 * Throws when the queue's streams exist with another layout than `layout` (services started with
 * different QUEUE_PARTITIONS would look for recipients in the wrong streams). Partition 0 alone
 * settles it: the slots it owns differ for every partition count. True when it exists.
 */
export async function checkQueueLayout(
  jsm: JetStreamManager,
  layout: QueueLayout,
): Promise<boolean> {
  const info = await streamInfo(jsm, layout.streams[0] as string);
  if (!info) return false;
  assertSubjects(info, layout, 0);
  return true;
}

async function ensurePartition(
  jsm: JetStreamManager,
  layout: QueueLayout,
  partition: number,
  opts: EnsureQueueStreamOptions,
): Promise<{ info: StreamInfo; change: QueueStreamChange; kept: string[] }> {
  const name = layout.streams[partition] as string;
  // proto's config uses JetStream's own enum strings; nats.js types them as TS enums.
  const desired = queueStreamConfig(opts, layout, partition) as unknown as StreamConfig;
  let info = await streamInfo(jsm, name);
  if (info === undefined) {
    try {
      return { info: await jsm.streams.add(desired), change: 'created', kept: [] };
    } catch (err) {
      if (!isStreamNameInUse(err)) throw err;
      info = await streamInfo(jsm, name);
      if (info === undefined) throw err;
    }
  }
  assertSubjects(info, layout, partition);
  for (const field of ['retention', 'storage'] as const) {
    if (info.config[field] !== desired[field]) {
      throw new Error(
        `stream ${name} has ${field} ${info.config[field]} but Herald needs ${desired[field]}: it cannot change in place; migrate or delete the stream`,
      );
    }
  }
  const current = info;
  const differing = MUTABLE.filter((field) => !sameValue(current.config[field], desired[field]));
  const kept = opts.allowShrink
    ? []
    : SHRINKING.filter(
        (field) => differing.includes(field) && lowers(current.config[field], desired[field]),
      );
  const changed = differing.filter((field) => !(kept as string[]).includes(field));
  if (changed.length === 0) return { info, change: 'unchanged', kept };
  const update = { ...info.config };
  for (const field of changed) Object.assign(update, { [field]: desired[field] });
  return { info: await jsm.streams.update(name, update), change: 'updated', kept };
}

/** The queue's streams were created with another QUEUE_PARTITIONS than this service's. */
export class QueueLayoutMismatch extends Error {
  override readonly name = 'QueueLayoutMismatch';
}

function assertSubjects(info: StreamInfo, layout: QueueLayout, partition: number): void {
  if (!sameValue(info.config.subjects ?? [], layout.subjectsOf(partition))) {
    throw new QueueLayoutMismatch(
      `stream ${info.config.name} captures ${info.config.subjects?.length ?? 0} queue slots, not the ${layout.subjectsOf(partition).length} that QUEUE_PARTITIONS=${layout.partitions} gives it: every service needs the QUEUE_PARTITIONS the queue was created with (changing it under stored events is not supported)`,
    );
  }
}

async function streamInfo(jsm: JetStreamManager, name: string): Promise<StreamInfo | undefined> {
  try {
    return await jsm.streams.info(name);
  } catch (err) {
    if (isStreamNotFound(err)) return undefined;
    throw err;
  }
}

/** True when `next` is a tighter limit than `current` (-1 or 0 meaning none). */
function lowers(current: unknown, next: unknown): boolean {
  const unlimited = (v: unknown) => typeof v !== 'number' || v <= 0;
  if (unlimited(next)) return false;
  return unlimited(current) || (next as number) < (current as number);
}

function sameValue(a: unknown, b: unknown): boolean {
  if (Array.isArray(a) && Array.isArray(b))
    return a.length === b.length && a.every((v, i) => v === b[i]);
  // The server omits false booleans and zero numbers from a stream's config.
  return (a ?? defaultOf(b)) === b;
}

function defaultOf(value: unknown): unknown {
  if (typeof value === 'boolean') return false;
  if (typeof value === 'number') return 0;
  return undefined;
}
