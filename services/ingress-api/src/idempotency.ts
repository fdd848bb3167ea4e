import { createHash } from 'node:crypto';
import { ensureKvBucket } from '@herald/kit';
import { isWrongLastSequence } from '@herald/nats';
import { HeraldError, type PushContent } from '@herald/proto';
import type { JetStreamClient, JetStreamManager, KV } from 'nats';
import { z } from 'zod';
import type { DispatchBody, HttpAnswer } from './outcome.js';

/** The KV bucket shared by every ingress instance, so a key is honoured across instances. */
export const IDEMPOTENCY_BUCKET = 'herald_idempotency';

const HEADER = 'Idempotency-Key';
const VISIBLE_ASCII = /^[\x21-\x7e]{1,255}$/;
/** Claim attempts before answering "in progress": each retry means another instance moved first. */
const CLAIM_ATTEMPTS = 3;

/** Returns the header's value when present and valid, or throws the 400 that says how to fix it. */
export function validateIdempotencyKey(value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  if (!VISIBLE_ASCII.test(value)) {
    throw new HeraldError(
      'invalid_field',
      `${HEADER} must be 1 to 255 visible ASCII characters (no spaces), such as a UUID; got ${value.length} characters`,
      { field: HEADER },
    );
  }
  return value;
}

/** What an Idempotency-Key promises to repeat: the same event to the same recipient. */
export interface IdempotentRequest {
  recipient: string;
  client: string;
  /** The payload's JSON text as received, UTF-8 encoded. */
  payload: Uint8Array;
  /** The body's `push` field, when it has one (issue 40). */
  push?: PushContent | undefined;
}

/**
 * A digest of the request a key was first used with (recipient, client, payload bytes, and its
 * `push` field when there is one), stored with the key so a reuse with another body is refused
 * instead of answered with the first result. A request without `push` digests as it always did,
 * so keys claimed before push existed keep their fingerprints.
 */
export function fingerprintOf(request: IdempotentRequest): string {
  const hash = createHash('sha256')
    .update(`${request.recipient}\n${request.client}\n`, 'utf8')
    .update(request.payload);
  // After a whole JSON value, "\n{" cannot be more of the payload: no two requests digest alike.
  if (request.push !== undefined) hash.update(`\n${JSON.stringify(request.push)}`, 'utf8');
  return hash.digest('hex');
}

/**
 * One entry per (account, key). `fp` is the request's fingerprint (absent in entries written
 * before it existed, which are trusted as they were). `pending` carries the event id so an instance taking over a stale
 * claim reuses it: a duplicate of a half-finished attempt then has the id herald.v1 clients drop.
 */
const Fingerprint = z.string().optional();

export const IdempotencyRecord = z.discriminatedUnion('state', [
  z.object({ state: z.literal('pending'), at: z.number(), id: z.string(), fp: Fingerprint }),
  z.object({ state: z.literal('failed'), at: z.number(), id: z.string(), fp: Fingerprint }),
  z.object({
    state: z.literal('done'),
    at: z.number(),
    id: z.string(),
    fp: Fingerprint,
    status: z.number().int(),
    body: z.record(z.string(), z.unknown()),
  }),
]);
export type IdempotencyRecord = z.infer<typeof IdempotencyRecord>;

export type Claim =
  /** This call may dispatch, with this event id; `finish` records the result. */
  | { kind: 'owner'; key: string; id: string; revision: number; fingerprint: string }
  /** The key already finished: answer exactly what the first call answered. */
  | { kind: 'replay'; answer: HttpAnswer }
  /** Another call holds a fresh claim on the key. */
  | { kind: 'busy' };

/** Answers worth remembering: a 503 is not, so the caller's retry dispatches again. */
const FINAL_STATUSES = new Set([200, 202, 507]);

/**
 * Creates the idempotency bucket (history 1, bucket-wide TTL: KV on 2.9 has no per-key TTL), or
 * brings an existing bucket's TTL in line with the configuration.
 */
export async function ensureIdempotencyBucket(
  js: JetStreamClient,
  jsm: JetStreamManager,
  opts: { ttlMs: number; replicas: number },
): Promise<void> {
  await ensureKvBucket(js, jsm, IDEMPOTENCY_BUCKET, opts);
}

/**
 * Makes a dispatch with an Idempotency-Key happen at most once per account and key, across
 * instances: `kv.create` is atomic, so exactly one caller wins the right to dispatch.
 */
export class IdempotencyStore {
  readonly #js: JetStreamClient;
  readonly #staleAfterMs: number;
  readonly #now: () => number;
  #kv: Promise<KV> | undefined;

  /**
   * @param staleAfterMs a pending claim older than this belongs to an instance that died
   *   mid-dispatch (a dispatch cannot outlast dispatchCeilingMs: LIVE_TIMEOUT_MS +
   *   LIVE_PROOF_WAIT_MS + PUBLISH_TIMEOUT_MS), so it is taken over.
   */
  constructor(js: JetStreamClient, opts: { staleAfterMs: number; now: () => number }) {
    this.#js = js;
    this.#staleAfterMs = opts.staleAfterMs;
    this.#now = opts.now;
  }

  /**
   * Claims `idempotencyKey` for `account`; `newId` is the event id if nobody used the key yet.
   * Throws 422 `idempotency_key_reused` when the key was used with a request of another
   * fingerprint, whatever state that use is in.
   */
  async claim(
    account: string,
    idempotencyKey: string,
    newId: string,
    fingerprint: string,
  ): Promise<Claim> {
    const kv = await this.#bucket();
    const key = entryKey(account, idempotencyKey);
    for (let attempt = 0; attempt < CLAIM_ATTEMPTS; attempt++) {
      const pending = (id: string) =>
        encode({ state: 'pending', at: this.#now(), id, fp: fingerprint });
      try {
        const revision = await kv.create(key, pending(newId));
        return { kind: 'owner', key, id: newId, revision, fingerprint };
      } catch (err) {
        if (!isWrongLastSequence(err)) throw err;
      }
      const entry = await kv.get(key);
      // Deleted or expired between our create and get: try to create again.
      if (entry === null || entry.operation !== 'PUT') continue;
      const parsed = IdempotencyRecord.safeParse(decode(entry.value));
      const record = parsed.success ? parsed.data : undefined;
      if (record?.fp !== undefined && record.fp !== fingerprint) throw reused();
      if (record?.state === 'done') {
        return {
          kind: 'replay',
          answer: { status: record.status, body: record.body as DispatchBody },
        };
      }
      if (record?.state === 'pending' && this.#now() - record.at < this.#staleAfterMs)
        return { kind: 'busy' };
      // A stale claim (its instance died) or a failed attempt: take it over with the same id.
      const id = record?.id ?? newId;
      try {
        return {
          kind: 'owner',
          key,
          id,
          revision: await kv.update(key, pending(id), entry.revision),
          fingerprint,
        };
      } catch (err) {
        if (!isWrongLastSequence(err)) throw err;
      }
    }
    return { kind: 'busy' };
  }

  /**
   * Records how the owner's dispatch ended. Guarded by the claim's revision, so a slow owner whose
   * claim was taken over does not overwrite the new owner's entry.
   */
  async finish(claim: Extract<Claim, { kind: 'owner' }>, result: HttpAnswer): Promise<void> {
    const kv = await this.#bucket();
    const record: IdempotencyRecord = FINAL_STATUSES.has(result.status)
      ? {
          state: 'done',
          at: this.#now(),
          id: claim.id,
          fp: claim.fingerprint,
          status: result.status,
          body: { ...result.body },
        }
      : { state: 'failed', at: this.#now(), id: claim.id, fp: claim.fingerprint };
    await kv.update(claim.key, encode(record), claim.revision);
  }

  /** Marks the claim failed so the next call with the key dispatches (with the same event id). */
  async abandon(claim: Extract<Claim, { kind: 'owner' }>): Promise<void> {
    const kv = await this.#bucket();
    await kv.update(
      claim.key,
      encode({ state: 'failed', at: this.#now(), id: claim.id, fp: claim.fingerprint }),
      claim.revision,
    );
  }

  #bucket(): Promise<KV> {
    if (!this.#kv) {
      // bindOnly: start() created the bucket; binding costs no server round trip per dispatch.
      this.#kv = this.#js.views.kv(IDEMPOTENCY_BUCKET, { bindOnly: true });
      this.#kv.catch(() => {
        this.#kv = undefined;
      });
    }
    return this.#kv;
  }
}

function reused(): HeraldError {
  return new HeraldError(
    'idempotency_key_reused',
    `This ${HEADER} was already used with a different request (recipient, payload or client): use a new ${HEADER} for a new event, or resend exactly the first request to get its result`,
    { field: HEADER },
  );
}

/** Keys are hashed: an Idempotency-Key may hold characters KV keys do not allow. */
function entryKey(account: string, idempotencyKey: string): string {
  return `${account}.${createHash('sha256').update(idempotencyKey, 'utf8').digest('hex')}`;
}

function encode(record: IdempotencyRecord): Uint8Array {
  return new TextEncoder().encode(JSON.stringify(record));
}

function decode(data: Uint8Array): unknown {
  try {
    return JSON.parse(new TextDecoder().decode(data));
  } catch {
    return undefined;
  }
}
