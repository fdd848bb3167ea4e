/**
 * The offline queue's shape: how many JetStream streams hold it and which stream holds a
 * recipient. The one place that maps a recipient to a stream; every service builds a
 * {@link QueueLayout} from its QUEUE_PARTITIONS and asks it.
 *
 * A recipient's queue subject carries its slot (proto's `queueSlot`: FNV-1a of
 * `<account>.<recipient>` mod 256); partition `p` of `n` owns the slots `s` with `s mod n = p`, and
 * its stream `HERALD_QUEUE_<p>` captures exactly those slots' subjects. So the partition of a
 * recipient is `queueSlot(account, recipient) mod n`: deterministic, the same in every process and
 * release, and even (256 slots over at most 256 streams; a power of two divides them exactly).
 *
 * Why partition at all: JetStream delivers a filtered consumer's messages by walking the stream
 * for its subject, so thousands of recipients draining one interleaved stream at once contend on
 * it (docs/architecture-history.md, "Partitions: the queue's shape").
 */
import { QUEUE_SLOTS, queueSlot, subjects } from '@herald/proto';

/** Partitions when QUEUE_PARTITIONS is not set: past 16 the drain gained nothing (see above). */
export const DEFAULT_QUEUE_PARTITIONS = 16;
/** Most partitions: one slot per stream. */
export const MAX_QUEUE_PARTITIONS = QUEUE_SLOTS;
/** The single queue stream of releases before partitioning; only the migration touches it. */
export const LEGACY_QUEUE_STREAM = 'HERALD_QUEUE';
/** Prefix of every partition stream's name. */
const STREAM_PREFIX = 'HERALD_QUEUE_';

export class QueueLayout {
  /** Number of partition streams. */
  readonly partitions: number;
  /** Stream names, indexed by partition. */
  readonly streams: readonly string[];

  constructor(partitions: number = DEFAULT_QUEUE_PARTITIONS) {
    if (!Number.isInteger(partitions) || partitions < 1 || partitions > MAX_QUEUE_PARTITIONS) {
      throw new RangeError(
        `queue partitions must be an integer from 1 to ${MAX_QUEUE_PARTITIONS}, got ${partitions}`,
      );
    }
    this.partitions = partitions;
    this.streams = Array.from({ length: partitions }, (_, p) => `${STREAM_PREFIX}${p}`);
  }

  /** The partition holding a recipient's queue. */
  partitionOf(account: string, recipient: string): number {
    return queueSlot(account, recipient) % this.partitions;
  }

  /** The stream holding a recipient's queue (and their durable consumer). */
  streamOf(account: string, recipient: string): string {
    return this.streams[this.partitionOf(account, recipient)] as string;
  }

  /** The stream holding a queue slot's subjects: `streamOf` for a recipient whose slot is known. */
  streamOfSlot(slot: number): string {
    const stream = this.streams[slot % this.partitions];
    if (stream === undefined || !Number.isInteger(slot) || slot < 0 || slot >= QUEUE_SLOTS) {
      throw new RangeError(`queue slot must be an integer in [0, ${QUEUE_SLOTS}), got ${slot}`);
    }
    return stream;
  }

  /** What partition `p`'s stream captures: one `rt.queue.<slot>.>` per slot it owns, ascending. */
  subjectsOf(partition: number): string[] {
    const out: string[] = [];
    for (let slot = partition; slot < QUEUE_SLOTS; slot += this.partitions) {
      out.push(subjects.queueSlot(slot));
    }
    return out;
  }
}

const defaultLayout = new QueueLayout();

/** The stream holding a recipient's queue under the default layout (tools and tests). */
export function queueStreamOf(account: string, recipient: string): string {
  return defaultLayout.streamOf(account, recipient);
}
