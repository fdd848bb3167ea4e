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
import { NatsRequester, replyJson } from '@herald/nats';
import { assertToken, DEVICE_FORMAT } from '@herald/proto';
import type { JetStreamClient, NatsConnection } from 'nats';

/** The KV bucket of device positions, one key per device (stream `KV_herald_device_positions`). */
export const DEVICE_POSITION_BUCKET = 'herald_device_positions';
/** Days a position is kept after its last write. */
export const DEFAULT_DEVICE_POSITION_TTL_DAYS = 30;

const MS_PER_DAY = 86_400_000;
const EMPTY = new Uint8Array(0);
const KV_OPERATION = 'KV-Operation';

/** A recorded position: the partition stream it is of, and the sequence. */
export interface DevicePosition {
  stream: string;
  seq: number;
}

function isPosition(value: unknown): value is DevicePosition {
  const v = value as Partial<DevicePosition> | undefined;
  return (
    typeof v?.stream === 'string' &&
    v.stream.length > 0 &&
    Number.isSafeInteger(v.seq) &&
    (v.seq as number) >= 0
  );
}

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
  await js.views.kv(DEVICE_POSITION_BUCKET, {
    history: 1,
    replicas: opts.replicas ?? 1,
    ttl: (opts.ttlDays ?? DEFAULT_DEVICE_POSITION_TTL_DAYS) * MS_PER_DAY,
    allow_direct: true,
  });
}

/** The socket edge's side of the bucket: one direct get per device connect, one put per record. */
export class DevicePositions {
  readonly #requester: NatsRequester;
  readonly #timeoutMs: number;
  readonly #space: string | undefined;

  /** @param space a key space of the bucket ({@link INBOX_POSITION_SPACE}); none for queue positions */
  constructor(
    nc: NatsConnection,
    timeoutMs: number,
    requester = new NatsRequester(nc),
    space?: string,
  ) {
    this.#requester = requester;
    this.#timeoutMs = timeoutMs;
    this.#space = space;
  }

  /** The device's position; undefined when none is recorded (a new device, or one expired). */
  async read(
    account: string,
    recipient: string,
    device: string,
  ): Promise<DevicePosition | undefined> {
    const key = devicePositionKey(account, recipient, device, this.#space);
    const outcome = await this.#requester.request(
      `$JS.API.DIRECT.GET.KV_${DEVICE_POSITION_BUCKET}.$KV.${DEVICE_POSITION_BUCKET}.${key}`,
      EMPTY,
      undefined,
      this.#timeoutMs,
    );
    if (outcome.kind === 'no_responders') return undefined;
    if (outcome.kind !== 'reply') throw new Error(`device position lookup: ${outcome.kind}`);
    const { msg } = outcome;
    const code = msg.headers?.code ?? 0;
    if (code === 404) return undefined;
    if (code >= 400) throw new Error(`device position lookup: ${code}`);
    if (msg.headers?.get(KV_OPERATION) || msg.data.length === 0) return undefined;
    const value = replyJson(msg);
    return isPosition(value) ? { stream: value.stream, seq: value.seq } : undefined;
  }

  /** Records the device's position (stored by JetStream when this resolves). */
  async record(
    account: string,
    recipient: string,
    device: string,
    position: DevicePosition,
  ): Promise<void> {
    const key = devicePositionKey(account, recipient, device, this.#space);
    if (!isPosition(position)) throw new RangeError('device position: stream and seq required');
    const body = new TextEncoder().encode(
      JSON.stringify({ stream: position.stream, seq: position.seq }),
    );
    const outcome = await this.#requester.request(
      `$KV.${DEVICE_POSITION_BUCKET}.${key}`,
      body,
      undefined,
      this.#timeoutMs,
    );
    if (outcome.kind !== 'reply') throw new Error(`device position record: ${outcome.kind}`);
    const ack = replyJson(outcome.msg) as { seq?: unknown; error?: { description?: string } };
    if (typeof ack?.seq !== 'number')
      throw new Error(`device position record: ${ack?.error?.description ?? 'not stored'}`);
  }
}
