import type { Client, VerifiedKey } from '@herald/proto';
import { authorizeKeyUse, authorizeRecipient, authorizeScope } from './key-policy.js';
import { checkRecipientToken, type TokenPolicy } from './recipient-token.js';

/** What a subscriber (a socket connect, a push subscription) claims, beside its key. */
export interface SubscriberUse {
  client: Client;
  /** The request's Origin header, if any. */
  origin: string | undefined;
  /** The recipient, validated and lower-cased. */
  recipient: string;
  /** The recipient token, for a key that requires one. */
  token: string | undefined;
  policy: TokenPolicy;
  /** Epoch ms. */
  now: number;
}

/**
 * The checks that let a key receive for a recipient, in the order `/ws/connect` applies them: its
 * use (expiry, plan, client, a web key's Origin), the recipient it may open (a dashboard
 * credential only its own, a customer key never that one), its scope (subscribe or both), and the
 * recipient token of a key that requires one. One function for the edge's connect and ingress's
 * push subscriptions (issue 40), so a push subscription is never easier to make than a socket is
 * to open. Resolves with when the token expires (undefined for a key without tokens); throws the
 * HeraldError of the first check that fails.
 */
export async function authorizeSubscriber(
  key: VerifiedKey,
  use: SubscriberUse,
): Promise<number | undefined> {
  authorizeKeyUse(key, { client: use.client, origin: use.origin, now: use.now });
  authorizeRecipient(key, use.recipient, 'socket');
  authorizeScope(key, 'subscribe');
  return checkRecipientToken(key, use.token, use.recipient, use.policy, use.now);
}
