import { dashboardRecipient, HeraldError, type VerifiedKey } from '@herald/proto';
import { SignJWT } from 'jose';
import { describe, expect, it } from 'vitest';
import { authorizeSubscriber, type SubscriberUse } from './subscriber.js';

const NOW = Date.UTC(2026, 10, 1, 12);
const SECRET = `hk_sign_${'s'.repeat(43)}`;
const RECIPIENT = '6f1c1b1e-3f0a-4c5e-9a7b-2d3c4e5f6a7b';
const ACCOUNT = '0a0a0a0a-0000-4000-8000-00000000000a';
const POLICY = { maxLifetimeMs: 3_600_000, clockSkewMs: 0 };

const key = (over: Partial<VerifiedKey> = {}): VerifiedKey => ({
  id: 'k',
  account_id: ACCOUNT,
  kind: 'live',
  client: 'web',
  domain: 'https://example.com',
  expires_at: null,
  plan: 'hobby',
  plan_until: null,
  limits: { connections: 5, dispatch_rate: 1, dispatch_burst: 5, queue_per_recipient: 10 },
  ...over,
});

const token = (sub: string) =>
  new SignJWT({})
    .setProtectedHeader({ alg: 'HS256' })
    .setSubject(sub)
    .setIssuedAt(NOW / 1000)
    .setExpirationTime(NOW / 1000 + 600)
    .sign(new TextEncoder().encode(SECRET));

async function code(k: VerifiedKey, use: Partial<SubscriberUse>): Promise<string | undefined> {
  try {
    await authorizeSubscriber(k, {
      client: 'web',
      origin: 'https://example.com',
      recipient: RECIPIENT,
      token: undefined,
      policy: POLICY,
      now: NOW,
      ...use,
    });
    return undefined;
  } catch (err) {
    if (err instanceof HeraldError) return err.code;
    throw err;
  }
}

describe('authorizeSubscriber: /ws/connect’s checks, shared with push subscriptions (issue 40)', () => {
  it('checks key use, then recipient, then scope, then the token, in that order', async () => {
    const tokens = { require_token: true, signing_secrets: [{ secret: SECRET, until: null }] };
    // Each refusal is the first failing check's, even when later checks would fail too.
    expect(await code(key({ scope: 'dispatch', ...tokens }), { origin: 'https://x.example' })).toBe(
      'origin_mismatch',
    );
    expect(
      await code(key({ scope: 'dispatch', ...tokens }), {
        recipient: dashboardRecipient(ACCOUNT),
      }),
    ).toBe('reserved_recipient');
    expect(await code(key({ scope: 'dispatch', ...tokens }), {})).toBe('scope_denied');
    expect(await code(key(tokens), {})).toBe('missing_token');
    expect(await code(key(tokens), { token: await token(RECIPIENT.replace('6f', '7f')) })).toBe(
      'token_recipient_mismatch',
    );
    expect(
      await code(key({ scope: 'subscribe', ...tokens }), { token: await token(RECIPIENT) }),
    ).toBe(undefined);
    expect(await code(key(), {})).toBe(undefined);
  });

  it('resolves with the token’s expiry, undefined for a key without tokens', async () => {
    const tokens = key({ require_token: true, signing_secrets: [{ secret: SECRET, until: null }] });
    const use = {
      client: 'web' as const,
      origin: 'https://example.com',
      recipient: RECIPIENT,
      policy: POLICY,
      now: NOW,
    };
    await expect(
      authorizeSubscriber(tokens, { ...use, token: await token(RECIPIENT) }),
    ).resolves.toBe(NOW + 600_000);
    await expect(authorizeSubscriber(key(), { ...use, token: 'ignored' })).resolves.toBeUndefined();
  });
});
