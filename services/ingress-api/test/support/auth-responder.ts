import { hashKey } from '@herald/access';
import {
  type AuthVerifyReply,
  AuthVerifyRequest,
  type PlanLimits,
  subjects,
  type VerifiedKey,
} from '@herald/proto';
import type { NatsConnection, Subscription } from 'nats';

export const ACCOUNT_A = '0a0a0a0a-0000-4000-8000-00000000000a';
export const ACCOUNT_B = '0b0b0b0b-0000-4000-8000-00000000000b';
export const WEB_ORIGIN = 'https://app.example.com';

/** Limits roomy enough that only tests about limits ever meet them. */
export const ROOMY_LIMITS: PlanLimits = {
  connections: 10_000,
  dispatch_rate: 10_000,
  dispatch_burst: 10_000,
  queue_per_recipient: 10_000,
};

/** What auth answers for a key: a Live mobile key of account A on a roomy plan, unless overridden. */
export const key = (id: string, over: Partial<VerifiedKey> = {}): VerifiedKey => ({
  id,
  account_id: ACCOUNT_A,
  kind: 'live',
  client: 'mobile',
  domain: null,
  expires_at: null,
  plan: 'startup',
  plan_until: null,
  limits: ROOMY_LIMITS,
  ...over,
});

/** API keys the responder knows, and what auth would answer for each. */
export const KEYS = {
  mobile: 'hk_live_mobile_key_of_account_a',
  web: 'hk_live_web_key_of_account_a',
  accountB: 'hk_live_mobile_key_of_account_b',
  /** Verified by auth, but its expiry has passed: ingress's authorizeKeyUse refuses it. */
  expired: 'hk_test_expired_key_of_account_a',
  revoked: 'hk_live_revoked_key',
  /** Auth itself reports the expiry. */
  expiredAtAuth: 'hk_test_expired_at_auth',
  unknown: 'hk_live_nobody_issued_this',
} as const;

const ANSWERS = new Map<string, AuthVerifyReply>([
  [hashKey(KEYS.mobile), { v: 1, ok: true, key: key('key-mobile') }],
  [
    hashKey(KEYS.web),
    { v: 1, ok: true, key: key('key-web', { client: 'web', domain: WEB_ORIGIN }) },
  ],
  [hashKey(KEYS.accountB), { v: 1, ok: true, key: key('key-b', { account_id: ACCOUNT_B }) }],
  [
    hashKey(KEYS.expired),
    { v: 1, ok: true, key: key('key-expired', { kind: 'test', expires_at: Date.now() - 60_000 }) },
  ],
  [
    hashKey(KEYS.revoked),
    {
      v: 1,
      ok: false,
      error: { code: 'key_revoked', message: 'This api_key was revoked: create a new key' },
    },
  ],
  [
    hashKey(KEYS.expiredAtAuth),
    {
      v: 1,
      ok: false,
      error: { code: 'key_expired', message: 'This test key expired: ask support to reset it' },
    },
  ],
]);

/** Makes the responder verify `apiKey` as `verified` (tests of limits add their own keys). */
export function answerFor(apiKey: string, verified: VerifiedKey): void {
  ANSWERS.set(hashKey(apiKey), { v: 1, ok: true, key: verified });
}

/**
 * A real NATS peer answering `rt.auth.verify` with the contract's AuthVerifyReply for the fixed
 * keys above. It stands in for the auth service because that service is another package and
 * services never import each other; the request/reply still crosses the real nats-server.
 */
export function startAuthResponder(nc: NatsConnection): Subscription {
  return nc.subscribe(subjects.authVerify, {
    callback: (err, msg) => {
      if (err) return;
      const request = AuthVerifyRequest.parse(JSON.parse(new TextDecoder().decode(msg.data)));
      const known = ANSWERS.get(request.key_hash);
      // As auth: a key's signing secrets only to a caller that asks (the push routes' verifier).
      const answer: AuthVerifyReply | undefined =
        known?.ok === true && request.signing_secrets !== true && known.key.signing_secrets
          ? { ...known, key: { ...known.key, signing_secrets: undefined } }
          : known;
      msg.respond(JSON.stringify(answer ?? unknownKey));
    },
  });
}

const unknownKey: AuthVerifyReply = {
  v: 1,
  ok: false,
  error: {
    code: 'invalid_api_key',
    message: 'api_key is not a key Herald issued: check it for typos',
  },
};
