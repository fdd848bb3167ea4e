/**
 * Per-device positions in the offline queue (issue 32): for each device of a recipient (the
 * `device` of `/ws/connect`), the highest stream sequence of the recipient's queue up to which
 * that device proved receipt of everything. A device that connects reads the recipient's stored
 * events after its position, so every device gets each queued event once, while the recipient's
 * durable consumer stays the queue (acked at the first proof from any socket, which makes the
 * status `delivered`). Acked events stay stored until retention's weekly run deletes them, which is
 * the window in which another device still catches up (docs/architecture-history.md, "Per-device
 * delivery").
 */
import { ensureRecordBucket, KvRecords, NatsRequester, type ReplySchema } from '@herald/nats';
import { assertToken, DEVICE_FORMAT } from '@herald/proto';
import type { JetStreamClient, NatsConnection } from 'nats';

/** The KV bucket of device positions, one key per device (stream `KV_herald_device_positions`). */
export const DEVICE_POSITION_BUCKET = 'herald_device_positions';
/** Days a position is kept after its last write. */
export const DEFAULT_DEVICE_POSITION_TTL_DAYS = 30;

const MS_PER_DAY = 86_400_000;

/** A recorded position: the partition stream it is of, and the sequence. */
export interface DevicePosition {
  stream: string;
  seq: number;
}

/** A position as the bucket holds it: its stream (a partition, or the inbox) and a sequence. */
const PositionRecord: ReplySchema<DevicePosition> = {
  safeParse(value) {
    const v = value as Partial<DevicePosition> | undefined;
    return typeof v?.stream === 'string' &&
      v.stream.length > 0 &&
      Number.isSafeInteger(v.seq) &&
      (v.seq as number) >= 0
      ? { success: true, data: { stream: v.stream, seq: v.seq as number } }
      : { success: false };
  },
};

/**
 * A second key space of the same bucket: a device's position in its recipient's inbox (inbox-mode
 * keys, the edge's inbox feed), `inbox.<account>.<recipient>.<device>`, value `{"stream":"inbox","seq"}`
 * with the store's sequence. Four tokens, so it never collides with a queue position's three.
 */
export const INBOX_POSITION_SPACE = 'inbox';

/**
 * The key `<account>.<recipient>.<device>` (or `<space>.<account>.<recipient>.<device>`), each
 * checked (a device id is a valid subject token).
 */
export function devicePositionKey(
  account: string,
  recipient: string,
  device: string,
  space?: string,
): string {
  if (!DEVICE_FORMAT.test(device)) throw new RangeError(`invalid device id: ${device}`);
  const key = `${assertToken('account', account)}.${assertToken('recipient', recipient)}.${device}`;
  return space === undefined ? key : `${space}.${key}`;
}

/** Creates the bucket (file storage, one value per key, direct gets), or leaves it as it is. */
export async function ensureDevicePositionBucket(
  js: JetStreamClient,
  opts: { replicas?: number; ttlDays?: number } = {},
): Promise<void> {
  await ensureRecordBucket(js, DEVICE_POSITION_BUCKET, {
    replicas: opts.replicas,
    ttlMs: (opts.ttlDays ?? DEFAULT_DEVICE_POSITION_TTL_DAYS) * MS_PER_DAY,
  });
}

/**
 * The socket edge's side of the bucket (a {@link KvRecords} of positions): one read per device
 * connect, one write per record. A position that is not one reads as none; a failed call is the
 * caller's to log.
 */
export class DevicePositions {
  readonly #records: KvRecords<DevicePosition>;
  readonly #space: string | undefined;

  /** @param space a key space of the bucket ({@link INBOX_POSITION_SPACE}); none for queue positions */
  constructor(
    nc: NatsConnection,
    timeoutMs: number,
    requester = new NatsRequester(nc),
    space?: string,
  ) {
    this.#records = new KvRecords(nc, DEVICE_POSITION_BUCKET, PositionRecord, {
      timeoutMs,
      requester,
    });
    this.#space = space;
  }

  /** The device's position; undefined when none is recorded (a new device, or one expired). */
  async read(
    account: string,
    recipient: string,
    device: string,
  ): Promise<DevicePosition | undefined> {
    return this.#records.read(devicePositionKey(account, recipient, device, this.#space));
  }

  /** Records the device's position (stored by JetStream when this resolves). */
  async record(
    account: string,
    recipient: string,
    device: string,
    position: DevicePosition,
  ): Promise<void> {
    await this.#records.put(devicePositionKey(account, recipient, device, this.#space), position);
  }
}
