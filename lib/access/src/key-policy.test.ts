import { dashboardRecipient, HeraldError, type VerifiedKey } from '@herald/proto';
import { describe, expect, it } from 'vitest';
import {
  authorizeKeyUse,
  authorizeRecipient,
  authorizeScope,
  type KeyEntry,
  type KeyUse,
  keyUseDeadline,
} from './key-policy.js';

const LIMITS = { connections: 5, dispatch_rate: 1, dispatch_burst: 5, queue_per_recipient: 10 };
const NOW = Date.UTC(2025, 5, 1, 12);

function key(over: Partial<VerifiedKey> = {}): VerifiedKey {
  return {
    id: 'k',
    account_id: 'a',
    kind: 'live',
    client: 'web',
    domain: 'https://example.com',
    expires_at: null,
    plan: 'hobby',
    plan_until: null,
    limits: LIMITS,
    ...over,
  };
}

function refusal(k: VerifiedKey, use: Partial<KeyUse>): HeraldError | undefined {
  try {
    authorizeKeyUse(k, { client: 'web', origin: 'https://example.com', now: NOW, ...use });
    return undefined;
  } catch (err) {
    if (err instanceof HeraldError) return err;
    throw err;
  }
}

describe('Origin of a web key', () => {
  it('accepts the exact registered origin (host case does not matter)', () => {
    expect(refusal(key(), {})).toBeUndefined();
    expect(refusal(key(), { origin: 'https://Example.COM' })).toBeUndefined();
    expect(
      refusal(key({ domain: 'https://example.com:8443' }), { origin: 'https://example.com:8443' }),
    ).toBeUndefined();
  });

  const refused: Array<[string, string | undefined]> = [
    ['missing', undefined],
    ['empty', ''],
    ['another host', 'https://other.com'],
    ['other scheme', 'http://example.com'],
    ['other port', 'https://example.com:8443'],
    ['default port spelled out', 'https://example.com:443'],
    ['prefix trick', 'https://evil-example.com'],
    ['suffix trick', 'https://example.com.evil.io'],
    ['subdomain', 'https://app.example.com'],
    ['trailing slash', 'https://example.com/'],
    ['opaque origin', 'null'],
  ];
  for (const [name, origin] of refused) {
    it(`refuses ${name} with 403 origin_mismatch naming Origin`, () => {
      const err = refusal(key(), { origin });
      expect(err).toMatchObject({ code: 'origin_mismatch', status: 403, field: 'Origin' });
      expect(err?.message).toContain('https://example.com');
    });
  }

  it('lets http://localhost through for a Test key only', () => {
    const local = { domain: 'http://localhost:3000' };
    const origin = 'http://localhost:3000';
    expect(refusal(key({ ...local, kind: 'test' }), { origin })).toBeUndefined();
    expect(refusal(key(local), { origin })).toMatchObject({ code: 'origin_mismatch' });
  });

  it('lets a dashboard credential bound to a local dev server (http://localhost) through, and no other http origin', () => {
    const dashboard = { kind: 'dashboard' as const };
    const local = 'http://localhost:5173';
    expect(refusal(key({ ...dashboard, domain: local }), { origin: local })).toBeUndefined();
    const lan = 'http://dashboard.lan';
    expect(refusal(key({ ...dashboard, domain: lan }), { origin: lan })).toMatchObject({
      code: 'origin_mismatch',
    });
  });

  it('needs no Origin for a mobile key', () => {
    const mobile = key({ client: 'mobile', domain: null });
    expect(refusal(mobile, { client: 'mobile', origin: undefined })).toBeUndefined();
    expect(refusal(mobile, { client: 'mobile', origin: 'https://anything.io' })).toBeUndefined();
  });
});

describe('client type', () => {
  it('refuses a key used as the other client with 403 client_mismatch', () => {
    expect(refusal(key({ client: 'mobile', domain: null }), { client: 'web' })).toMatchObject({
      code: 'client_mismatch',
      status: 403,
      field: 'client',
    });
  });
});

describe('expiry and plan lapse', () => {
  it('refuses a key at its expiry, not a millisecond before', () => {
    const k = key({ kind: 'test', expires_at: NOW + 1 });
    expect(refusal(k, {})).toBeUndefined();
    expect(refusal(k, { now: NOW + 1 })).toMatchObject({ code: 'key_expired', status: 401 });
  });

  it('refuses a Live key once its plan lapsed, saying when and how to renew', () => {
    const k = key({ plan_until: NOW + 1 });
    expect(refusal(k, {})).toBeUndefined();
    const err = refusal(k, { now: NOW + 1 });
    expect(err).toMatchObject({ code: 'plan_inactive', status: 403, field: 'api_key' });
    expect(err?.message).toContain(new Date(NOW + 1).toISOString());
    expect(err?.message).toContain('renew');
  });

  it('ignores plan_until for a Test key, which lives by its own expiry', () => {
    const k = key({ kind: 'test', plan_until: NOW - 1, expires_at: NOW + 10 });
    expect(refusal(k, {})).toBeUndefined();
  });

  it('reports the earlier of expiry and plan lapse as the deadline of a key in use', () => {
    expect(keyUseDeadline(key())).toBeNull();
    expect(keyUseDeadline(key({ plan_until: 50 }))).toBe(50);
    expect(keyUseDeadline(key({ plan_until: 50, expires_at: 40 }))).toBe(40);
    expect(keyUseDeadline(key({ plan_until: 30, expires_at: 40 }))).toBe(30);
    expect(keyUseDeadline(key({ kind: 'test', plan_until: 30, expires_at: 40 }))).toBe(40);
  });
});

describe('authorizeRecipient: the dashboard recipient and dashboard credentials', () => {
  const account = '0b6a5d3e-7c41-4f2a-9d0e-1a2b3c4d5e6f';
  const other = '9f8e7d6c-5b4a-4c3d-8e2f-0a1b2c3d4e5f';
  const reserved = dashboardRecipient(account);
  const anyone = '3f1c2b4a-0d9e-4f8a-b7c6-5d4e3f2a1b0c';
  const dash = (role: 'listen' | 'send', over: Partial<VerifiedKey> = {}) =>
    key({
      account_id: account,
      kind: 'dashboard',
      client: role === 'listen' ? 'web' : 'mobile',
      dashboard: { role, recipient: reserved },
      ...over,
    });
  const refused = (k: VerifiedKey, recipient: string, entry: KeyEntry) => {
    try {
      authorizeRecipient(k, recipient, entry);
      return undefined;
    } catch (err) {
      if (err instanceof HeraldError) return { code: err.code, status: err.status };
      throw err;
    }
  };

  it('lets a listener open only its own dashboard recipient', () => {
    expect(refused(dash('listen'), reserved, 'socket')).toBeUndefined();
    expect(refused(dash('listen'), reserved.toUpperCase(), 'socket')).toBeUndefined();
    expect(refused(dash('listen'), anyone, 'socket')).toEqual({
      code: 'dashboard_key_scope',
      status: 403,
    });
    expect(refused(dash('listen'), dashboardRecipient(other), 'socket')?.code).toBe(
      'dashboard_key_scope',
    );
  });

  it('never lets a dashboard credential POST /notify, and a listener never dispatches', () => {
    expect(refused(dash('listen'), reserved, 'http')?.code).toBe('dashboard_key_scope');
    expect(refused(dash('send'), reserved, 'http')?.code).toBe('dashboard_key_scope');
    expect(refused(dash('listen'), reserved, 'nats')?.code).toBe('dashboard_key_scope');
  });

  it("lets auth's sender dispatch over NATS to the dashboard recipient only, and never open a socket", () => {
    expect(refused(dash('send'), reserved, 'nats')).toBeUndefined();
    expect(refused(dash('send'), anyone, 'nats')?.code).toBe('dashboard_key_scope');
    expect(refused(dash('send'), reserved, 'socket')?.code).toBe('dashboard_key_scope');
  });

  it('refuses a dashboard credential without its scope', () => {
    expect(refused(key({ account_id: account, kind: 'dashboard' }), reserved, 'socket')?.code).toBe(
      'dashboard_key_scope',
    );
  });

  it("keeps customer keys off the dashboard recipient, and only their own account's is reserved", () => {
    for (const entry of ['socket', 'http', 'nats'] as const) {
      expect(refused(key({ account_id: account }), reserved, entry)).toEqual({
        code: 'reserved_recipient',
        status: 403,
      });
      expect(refused(key({ account_id: account, kind: 'test' }), reserved, entry)?.code).toBe(
        'reserved_recipient',
      );
      expect(refused(key({ account_id: account }), anyone, entry)).toBeUndefined();
      expect(refused(key({ account_id: other }), reserved, entry)).toBeUndefined();
    }
  });
});

describe('authorizeScope', () => {
  const scopeRefusal = (k: VerifiedKey, use: 'subscribe' | 'dispatch') => {
    try {
      authorizeScope(k, use);
      return undefined;
    } catch (err) {
      return err as HeraldError;
    }
  };

  it('lets a key of scope both (or none, made before scopes) do either', () => {
    for (const k of [key({ scope: 'both' }), key()]) {
      expect(scopeRefusal(k, 'subscribe')).toBeUndefined();
      expect(scopeRefusal(k, 'dispatch')).toBeUndefined();
    }
  });

  it('refuses a subscribe key dispatching and a dispatch key subscribing: 403 scope_denied', () => {
    const dispatching = scopeRefusal(key({ scope: 'subscribe' }), 'dispatch');
    expect(dispatching).toMatchObject({ code: 'scope_denied', status: 403, field: 'api_key' });
    expect(dispatching?.message).toMatch(/subscribe key/);
    const subscribing = scopeRefusal(key({ scope: 'dispatch' }), 'subscribe');
    expect(subscribing).toMatchObject({ code: 'scope_denied', status: 403 });
    expect(subscribing?.message).toMatch(/cannot open sockets/);
    expect(scopeRefusal(key({ scope: 'subscribe' }), 'subscribe')).toBeUndefined();
    expect(scopeRefusal(key({ scope: 'dispatch' }), 'dispatch')).toBeUndefined();
  });
});
