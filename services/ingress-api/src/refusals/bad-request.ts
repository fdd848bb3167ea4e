import type { KeyVerifier } from '@herald/access';
import { HeraldError, isWellFormedApiKey } from '@herald/proto';
import { attributeRefusal, refusedKeyOf } from './refusal-log.js';

const decoder = new TextDecoder();

/**
 * A request refused for its body (a 400 before its key was looked at: a bad field, a missing
 * recipient) is attributed to its key when the body names a well-formed `api_key` that verifies,
 * so the dashboard shows it. The verification is the cached one every dispatch uses (its
 * refusals cached too), and an unknown, revoked or expired key leaves the refusal unattributed.
 * Not counted against the source's failed-key limit: the answer is the 400, not a 401.
 */
export function createBadRequestAttribution(verifier: Pick<KeyVerifier, 'verify'>) {
  return async function attributeBadRequest(err: unknown, body: Uint8Array): Promise<void> {
    if (!(err instanceof HeraldError) || err.status !== 400 || refusedKeyOf(err)) return;
    let apiKey: unknown;
    try {
      apiKey = (JSON.parse(decoder.decode(body)) as { api_key?: unknown } | null)?.api_key;
    } catch {
      return;
    }
    if (!isWellFormedApiKey(apiKey)) return;
    try {
      attributeRefusal(err, await verifier.verify(apiKey));
    } catch {
      // Not a key that verifies: nobody's refusal to show.
    }
  };
}
