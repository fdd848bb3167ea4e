import { QUEUE_STREAM, type QueueStreamOptions, queueStreamConfig } from '@herald/proto';
import type { JetStreamManager, StreamConfig, StreamInfo } from 'nats';

export type QueueStreamChange = 'created' | 'updated' | 'unchanged';

/**
 * Caps whose lowering on a live stream makes the server delete stored events at once, oldest
 * first (measured on 2.9.10: lowering max_msgs_per_subject from 10 to 3 deleted 3 of a 6-event
 * queue). Undelivered events must never vanish, so these only go up unless the caller allows it.
 */
const SHRINKING = ['max_msgs_per_subject', 'max_bytes'] as const;

export interface EnsureQueueStreamOptions extends QueueStreamOptions {
  /**
   * Apply a lower per-recipient or byte cap even though the server then deletes the oldest
   * stored events over it. Default false: a lower cap is kept at its current value and reported
   * in `kept`.
   */
  allowShrink?: boolean;
}

const JS_ERR_STREAM_NOT_FOUND = 10059;
const JS_ERR_STREAM_NAME_IN_USE = 10058;

/** Limits an operator may change on a running stream; retention and storage cannot change in place. */
const MUTABLE = [
  'subjects',
  'discard',
  'discard_new_per_subject',
  'max_msgs_per_subject',
  'max_bytes',
  'max_msg_size',
  'max_age',
  'num_replicas',
  'duplicate_window',
] as const;

/**
 * Creates the offline queue stream, or brings an existing one's limits in line with `opts` (a
 * changed QUEUE_MAX_PER_RECIPIENT takes effect on restart). Safe to call from several instances at
 * once: a lost creation race falls back to comparing and updating.
 */
export async function ensureQueueStream(
  jsm: JetStreamManager,
  opts: EnsureQueueStreamOptions = {},
): Promise<{ info: StreamInfo; change: QueueStreamChange; kept: string[] }> {
  // proto's config uses JetStream's own enum strings; nats.js types them as TS enums.
  const desired = queueStreamConfig(opts) as unknown as StreamConfig;
  let info = await streamInfo(jsm);
  if (info === undefined) {
    try {
      return { info: await jsm.streams.add(desired), change: 'created', kept: [] };
    } catch (err) {
      if (errCode(err) !== JS_ERR_STREAM_NAME_IN_USE) throw err;
      info = await streamInfo(jsm);
      if (info === undefined) throw err;
    }
  }
  for (const field of ['retention', 'storage'] as const) {
    if (info.config[field] !== desired[field]) {
      throw new Error(
        `stream ${QUEUE_STREAM} has ${field} ${info.config[field]} but Herald needs ${desired[field]}: it cannot change in place; migrate or delete the stream`,
      );
    }
  }
  const differing = MUTABLE.filter((field) => !sameValue(info.config[field], desired[field]));
  const kept = opts.allowShrink
    ? []
    : SHRINKING.filter(
        (field) => differing.includes(field) && lowers(info.config[field], desired[field]),
      );
  const changed = differing.filter((field) => !(kept as string[]).includes(field));
  if (changed.length === 0) return { info, change: 'unchanged', kept };
  const update = { ...info.config };
  for (const field of changed) Object.assign(update, { [field]: desired[field] });
  return { info: await jsm.streams.update(QUEUE_STREAM, update), change: 'updated', kept };
}

async function streamInfo(jsm: JetStreamManager): Promise<StreamInfo | undefined> {
  try {
    return await jsm.streams.info(QUEUE_STREAM);
  } catch (err) {
    if (errCode(err) === JS_ERR_STREAM_NOT_FOUND) return undefined;
    throw err;
  }
}

function errCode(err: unknown): number | undefined {
  return (err as { api_error?: { err_code?: number } } | undefined)?.api_error?.err_code;
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
