import {
  HeraldError,
  REFUSAL_ORIGIN_MAX,
  type RefusalBatch,
  type RefusalRecord,
  type VerifiedKey,
} from '@herald/proto';
import type { RefusalLimits } from './refusal-env.js';

/** The key a thrown refusal concerns, when a step knew it (the key verified, then refused). */
const attributed = new WeakMap<object, Pick<VerifiedKey, 'id' | 'account_id'>>();

/**
 * Marks `err` as a refusal of `key`, for the refusal log; returns `err` to throw. A step that
 * refuses after the key was verified (Origin, scope, expiry, rate, recipient) calls it; a refusal
 * before (an unknown or revoked key, a body too large to read) stays unattributed.
 */
export function attributeRefusal<E>(err: E, key: Pick<VerifiedKey, 'id' | 'account_id'>): E {
  if (typeof err === 'object' && err !== null && !attributed.has(err)) attributed.set(err, key);
  return err;
}

/** The key `err` was attributed to, if any. */
export function refusedKeyOf(err: unknown): Pick<VerifiedKey, 'id' | 'account_id'> | undefined {
  return typeof err === 'object' && err !== null ? attributed.get(err) : undefined;
}

/** Where a refused request came in: its route and Origin header. */
export interface RefusalContext {
  route: string;
  origin?: string | undefined;
}

/**
 * Identical refusals of a key within one interval (REFUSAL_FLUSH_MS) are one record with a count
 * and first/last time; each interval, every key with refusals gets one message. Bounded: at most
 * REFUSAL_KEYS_MAX keys and REFUSAL_KINDS_PER_KEY_MAX kinds per key are held; beyond, a refusal
 * is only counted as dropped. Never a payload or a key: the key's id, the code, field, Origin (cut
 * to REFUSAL_ORIGIN_MAX) and route.
 */
export class RefusalLog {
  private pending = new Map<string, { account: string; kinds: Map<string, RefusalRecord> }>();
  private timer: NodeJS.Timeout | undefined;
  /** Refusals not held because a bound was reached (herald_refusals_dropped_total). */
  dropped = 0;
  private readonly now: () => number;

  constructor(
    private readonly publish: (batch: RefusalBatch) => void,
    private readonly limits: RefusalLimits,
    opts: { now?: () => number; onDrop?: () => void } = {},
  ) {
    this.now = opts.now ?? Date.now;
    this.onDrop = opts.onDrop;
  }

  private readonly onDrop: (() => void) | undefined;

  private drop(): void {
    this.dropped++;
    this.onDrop?.();
  }

  /** Records `err` when it is a refusal attributed to a key; anything else is ignored. */
  noteError(err: unknown, context: RefusalContext): void {
    const key = refusedKeyOf(err);
    if (key === undefined || !(err instanceof HeraldError) || err.status < 400) return;
    if (err.status === 500) return;
    this.record(key, {
      status: err.status,
      code: err.code,
      field: err.field ?? null,
      origin: context.origin ?? null,
      route: context.route,
    });
  }

  /** Adds one refusal of `key` to its interval's records. */
  record(
    key: Pick<VerifiedKey, 'id' | 'account_id'>,
    r: Pick<RefusalRecord, 'status' | 'code' | 'field' | 'origin' | 'route'>,
  ): void {
    const at = this.now();
    const origin = r.origin === null ? null : r.origin.slice(0, REFUSAL_ORIGIN_MAX);
    const field = r.field === null ? null : r.field.slice(0, 128);
    const route = r.route.slice(0, 64);
    const code = r.code.slice(0, 64);
    let entry = this.pending.get(key.id);
    if (entry === undefined) {
      if (this.pending.size >= this.limits.keysMax) {
        this.drop();
        return;
      }
      entry = { account: key.account_id, kinds: new Map() };
      this.pending.set(key.id, entry);
      // The interval starts with its first refusal: an idle ingress runs no timer.
      this.timer ??= setTimeout(() => {
        this.timer = undefined;
        this.flush();
      }, this.limits.flushMs).unref();
    }
    const kind = JSON.stringify([r.status, code, field, origin, route]);
    const held = entry.kinds.get(kind);
    if (held !== undefined) {
      held.count++;
      held.last_at = at;
      return;
    }
    if (entry.kinds.size >= this.limits.kindsPerKeyMax) {
      this.drop();
      return;
    }
    entry.kinds.set(kind, {
      status: r.status,
      code,
      field,
      origin,
      route,
      count: 1,
      first_at: at,
      last_at: at,
    });
  }

  /** Publishes every held key's records, one message per key, and starts a new interval. */
  flush(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    const pending = this.pending;
    this.pending = new Map();
    for (const [keyId, { account, kinds }] of pending) {
      this.publish({ v: 1, account_id: account, key_id: keyId, records: [...kinds.values()] });
    }
  }

  /** Stops the interval's timer and publishes what is held (at close). */
  stop(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    this.flush();
  }
}
