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
 * The 400 waits for this at most ATTRIBUTION_WAIT_MS, and not at all while NATS is down (no
 * verification could answer then): a refusal left unattributed is a missing line on a dashboard,
 * a 400 held for a verification's timeout is a slower answer to every bad request.
 */
export function createBadRequestAttribution(
  verifier: Pick<KeyVerifier, 'verify'>,
  natsDown: () => boolean = () => false,
) {
  return async function attributeBadRequest(err: unknown, body: Uint8Array): Promise<void> {
    if (!(err instanceof HeraldError) || err.status !== 400 || refusedKeyOf(err)) return;
    let apiKey: unknown;
    try {
      apiKey = (JSON.parse(decoder.decode(body)) as { api_key?: unknown } | null)?.api_key;
    } catch {
      return;
    }
    if (!isWellFormedApiKey(apiKey) || natsDown()) return;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const verified = verifier.verify(apiKey).then(
      (key) => key,
      // Not a key that verifies: nobody's refusal to show.
      () => undefined,
    );
    const late = new Promise<undefined>((resolve) => {
      timer = setTimeout(() => resolve(undefined), ATTRIBUTION_WAIT_MS);
    });
    try {
      const key = await Promise.race([verified, late]);
      if (key) attributeRefusal(err, key);
    } finally {
      clearTimeout(timer);
    }
  };
}

/** Most a 400 waits for its key's verification (one NATS round trip, usually cached), ms. */
export const ATTRIBUTION_WAIT_MS = 250;
