import { isWrongLastSequence } from '@herald/nats';
import type { KV, KvEntry } from 'nats';
import { type BucketLimits, BucketState, msUntilToken, refill } from './token-bucket.js';

/** Compare-and-set attempts per lease before letting the caller try again. */
const CAS_ATTEMPTS = 5;

/** What one visit to a key's shared bucket got. */
export type SharedTake =
  /** No whole token in the bucket: none until `until` (epoch ms). */
  | { kind: 'empty'; until: number }
  /** `tokens` taken; the bucket has no whole token left until `emptyUntil` (0: it has one). */
  | { kind: 'taken'; tokens: number; emptyUntil: number }
  /** Every compare-and-set lost to other instances: nothing taken. */
  | { kind: 'lost' };

/**
 * Takes up to `wanted()` whole tokens from the key's token bucket in the KV (`RATE_BUCKET`, one
 * entry per key id) with compare-and-set, so tokens are never handed out twice across instances.
 * `wanted` is asked on each attempt: dispatches may join the wait meanwhile. Throws when the KV
 * does not answer.
 */
export async function takeShared(
  kv: KV,
  keyId: string,
  limits: BucketLimits,
  wanted: () => number,
  now: () => number,
): Promise<SharedTake> {
  for (let attempt = 0; attempt < CAS_ATTEMPTS; attempt++) {
    const entry = await kv.get(keyId);
    const at = now();
    const bucket = refill(stateOf(entry), limits, at);
    if (bucket.tokens < 1)
      return { kind: 'empty', until: at + msUntilToken(bucket.tokens, limits) };
    const taken = Math.min(wanted(), Math.floor(bucket.tokens));
    const rest = bucket.tokens - taken;
    const next = encode({ tokens: rest, at: bucket.at });
    try {
      if (entry?.operation === 'PUT') await kv.update(keyId, next, entry.revision);
      else await kv.create(keyId, next);
    } catch (err) {
      if (isWrongLastSequence(err)) continue;
      throw err;
    }
    // Took the last whole token: once these are spent, refuse locally until the next is due.
    return {
      kind: 'taken',
      tokens: taken,
      emptyUntil: rest < 1 ? at + msUntilToken(rest, limits) : 0,
    };
  }
  return { kind: 'lost' };
}

function stateOf(entry: KvEntry | null): BucketState | undefined {
  if (entry?.operation !== 'PUT') return undefined;
  try {
    const parsed = BucketState.safeParse(entry.json());
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}

function encode(state: BucketState): Uint8Array {
  return new TextEncoder().encode(JSON.stringify(state));
}
