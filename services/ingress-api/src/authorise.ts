import {
  authorizeKeyUse,
  authorizeRecipient,
  authorizeScope,
  type KeyVerifier,
} from '@herald/access';
import { HeraldError, type NotifyRequest, type VerifiedKey } from '@herald/proto';
import { attributeRefusal } from './refusals/refusal-log.js';

export interface AuthoriseDeps {
  verifier: Pick<KeyVerifier, 'verify'>;
  /** Epoch ms. */
  now: () => number;
}

/** Who is asking, as the transport saw it. */
export interface Caller {
  /** The Origin header, if any. */
  origin?: string | undefined;
  /** The account named by a NATS dispatch subject; the key must belong to it. */
  subjectAccount?: string | undefined;
}

/**
 * Step 2 of a dispatch: the key is one auth issued and still valid, belongs to the subject's
 * account (NATS), may be used by this client from this Origin and for this recipient (a dashboard
 * credential only over NATS to its dashboard recipient, a customer key never to that one). A
 * batch passes no recipient (its events are checked one by one), and a dashboard credential is
 * then refused outright; a `subscribe` key is refused `scope_denied`. Throws the HeraldError saying which check failed. The key's rate is the
 * front door's to take, after this: a single dispatch takes one token, a batch one per event.
 */
export function createAuthorise(deps: AuthoriseDeps) {
  return async function authorise(
    request: Pick<NotifyRequest, 'api_key' | 'client'> & { recipient?: string | undefined },
    caller: Caller,
  ): Promise<VerifiedKey> {
    const key = await deps.verifier.verify(request.api_key);
    try {
      checkKey(key, request, caller, deps.now());
    } catch (err) {
      // Verified, then refused: the refusal is this key's, for the dashboard (refusal-log.ts).
      throw attributeRefusal(err, key);
    }
    return key;
  };
}

/** The checks of a verified key, in `authorise`'s order; throws the refusal. */
function checkKey(
  key: VerifiedKey,
  request: Pick<NotifyRequest, 'client'> & { recipient?: string | undefined },
  caller: Caller,
  now: number,
): void {
  if (caller.subjectAccount !== undefined && caller.subjectAccount !== key.account_id) {
    throw new HeraldError(
      'account_mismatch',
      `This api_key belongs to another account than the dispatch subject names: publish to the subject of account ${key.account_id}`,
      { field: 'api_key' },
    );
  }
  authorizeKeyUse(key, { client: request.client, origin: caller.origin, now });
  const entry = caller.subjectAccount === undefined ? 'http' : 'nats';
  if (request.recipient !== undefined) authorizeRecipient(key, request.recipient, entry);
  else if (key.kind === 'dashboard') authorizeRecipient(key, '', 'http');
  // After the dashboard checks, so a dashboard credential keeps its own code; a subscribe key
  // (the browser's) never sends, whichever transport it tries.
  authorizeScope(key, 'dispatch');
}

export type Authorise = ReturnType<typeof createAuthorise>;

/**
 * A key that came verified with a Pusher app (issue 41), checked for a signed HTTP API request
 * as `authorise` checks a sent one: not expired, its plan not lapsed, scope `dispatch`, and for a
 * recipient the dashboard rules (no `recipient`: a dashboard credential is refused outright). The
 * request's signature with the app's secret is the credential, from the app's server: the key's
 * client and a web key's Origin, which a browser's request carries, are not asked for.
 */
export function authoriseAppKey(
  key: VerifiedKey,
  recipient: string | undefined,
  now: number,
): void {
  authorizeKeyUse(key.domain === null ? key : { ...key, domain: null }, {
    client: key.client,
    origin: undefined,
    now,
  });
  authorizeRecipient(key, recipient ?? '', 'http');
  authorizeScope(key, 'dispatch');
}
