import { HeraldError, KeyPrefix } from '@herald/proto';
import { describe, expect, it } from 'vitest';
import { MAX_HOST_LENGTH, normalizeDomain } from '../src/keys/domain.js';
import {
  expiryFor,
  generateApiKey,
  KEY_LENGTH,
  type KeyRequest,
  keyPrefixOf,
  resolveKeySpec,
  TEST_KEY_TTL_MS,
} from '../src/keys/key-spec.js';
import { requiresTokenByDefault, unsignedRecipientsLine } from '../src/keys/token-rule.js';

describe('generateApiKey', () => {
  it('starts with the kind prefix and has a fixed length of letters and digits', () => {
    for (const kind of ['live', 'test'] as const) {
      const key = generateApiKey(kind);
      expect(key.startsWith(KeyPrefix[kind])).toBe(true);
      expect(key).toHaveLength(KEY_LENGTH);
      expect(key).toMatch(/^hk_(live|test)_[0-9A-Za-z]{43}$/);
    }
  });

  it('never repeats a key', () => {
    const keys = new Set(Array.from({ length: 2000 }, () => generateApiKey('test')));
    expect(keys.size).toBe(2000);
  });

  it('keeps the first 12 characters as the prefix', () => {
    const key = generateApiKey('test');
    expect(keyPrefixOf(key)).toBe(key.slice(0, 12));
    expect(keyPrefixOf(key)).toMatch(/^hk_test_[0-9A-Za-z]{4}$/);
  });
});

describe('expiryFor', () => {
  it('gives test keys exactly 4 hours and live keys none', () => {
    const now = new Date('2025-03-01T10:15:30.123Z');
    expect(expiryFor('test', now)?.toISOString()).toBe('2025-03-01T14:15:30.123Z');
    expect(TEST_KEY_TTL_MS).toBe(4 * 3600 * 1000);
    expect(expiryFor('live', now)).toBeNull();
  });
});

describe('resolveKeySpec', () => {
  const now = new Date('2025-03-01T00:00:00Z');

  it('refuses a web key without a domain, naming domain', () => {
    for (const domain of [undefined, '']) {
      const err = catchError(() => resolveKeySpec({ kind: 'live', client: 'web', domain }, now));
      expect(err.field).toBe('domain');
      expect(err.code).toBe('missing_field');
      expect(err.message).toMatch(/domain is required for a web key.*https:\/\//);
    }
  });

  it('refuses a mobile key with a domain', () => {
    const err = catchError(() =>
      resolveKeySpec({ kind: 'live', client: 'mobile', domain: 'https://a.example' }, now),
    );
    expect(err.field).toBe('domain');
    expect(err.message).toMatch(/only for web keys/);
  });

  it('refuses an unknown kind or client, naming the field', () => {
    const kind = catchError(() =>
      resolveKeySpec({ kind: 'gold' as 'live', client: 'mobile' }, now),
    );
    expect(kind.field).toBe('kind');
    const client = catchError(() => resolveKeySpec({ kind: 'live', client: 'tv' as 'web' }, now));
    expect(client.field).toBe('client');
  });

  it('normalises the domain and fixes the expiry', () => {
    expect(
      resolveKeySpec({ kind: 'test', client: 'web', domain: 'https://App.Example.com' }, now),
    ).toEqual({
      kind: 'test',
      client: 'web',
      domain: 'https://app.example.com',
      expires_at: new Date('2025-03-01T04:00:00Z'),
      name: null,
      scope: 'both',
      require_token: false,
      allow_unsigned_recipients: false,
      inbox_days: null,
      webhook_payload: false,
      push_after_ms: null,
      push_ttl_s: null,
      push_title: null,
      push_body: null,
      push_include_payload: null,
      tokens_by_default: false,
    });
    expect(resolveKeySpec({ kind: 'live', client: 'mobile' }, now)).toEqual({
      kind: 'live',
      client: 'mobile',
      domain: null,
      expires_at: null,
      name: null,
      scope: 'both',
      require_token: false,
      allow_unsigned_recipients: false,
      inbox_days: null,
      webhook_payload: false,
      push_after_ms: null,
      push_ttl_s: null,
      push_title: null,
      push_body: null,
      push_include_payload: null,
      tokens_by_default: false,
    });
  });
});

describe('resolveKeySpec inbox_days', () => {
  const now = new Date('2025-03-01T00:00:00Z');
  it('takes 1 to 365 days and refuses the rest naming inbox_days', () => {
    for (const days of [1, 365]) {
      expect(
        resolveKeySpec({ kind: 'live', client: 'mobile', inbox_days: days }, now).inbox_days,
      ).toBe(days);
    }
    for (const days of [0, 366, 1.5]) {
      expect(() =>
        resolveKeySpec({ kind: 'live', client: 'mobile', inbox_days: days }, now),
      ).toThrow(
        expect.objectContaining({
          field: 'inbox_days',
          message: expect.stringMatching(/1 to 365/),
        }),
      );
    }
  });
});

describe('resolveKeySpec webhook_payload', () => {
  const now = new Date('2025-03-01T00:00:00Z');
  it('takes the opt-in for keys that send, and refuses it for a subscribe key naming the field', () => {
    for (const scope of ['dispatch', 'both', undefined]) {
      expect(
        resolveKeySpec({ kind: 'live', client: 'mobile', scope, webhook_payload: true }, now)
          .webhook_payload,
      ).toBe(true);
    }
    expect(() =>
      resolveKeySpec(
        { kind: 'live', client: 'mobile', scope: 'subscribe', webhook_payload: true },
        now,
      ),
    ).toThrow(
      expect.objectContaining({
        field: 'webhook_payload',
        message: expect.stringMatching(/keys that send events/),
      }),
    );
  });
});

describe('the token rule (issue 46): web inbox keys require recipient tokens by default', () => {
  const now = new Date('2025-03-01T00:00:00Z');
  const web = { kind: 'live', client: 'web', domain: 'https://app.example.com' } as const;
  const spec = (extra: Partial<KeyRequest>) => resolveKeySpec({ ...web, ...extra }, now);
  const refusal = (extra: Partial<KeyRequest>) => {
    try {
      spec(extra);
    } catch (err) {
      return { field: (err as HeraldError).field, message: (err as Error).message };
    }
    throw new Error('not refused');
  };

  it('names web keys in inbox mode, and nothing else', () => {
    expect(requiresTokenByDefault({ client: 'web', inbox_days: 7 })).toBe(true);
    expect(requiresTokenByDefault({ client: 'web', inbox_days: null })).toBe(false);
    expect(requiresTokenByDefault({ client: 'mobile', inbox_days: 7 })).toBe(false);
  });

  it('turns tokens on for a web inbox key unless opted out, and says it did', () => {
    expect(spec({ inbox_days: 7 })).toMatchObject({
      require_token: true,
      allow_unsigned_recipients: false,
      tokens_by_default: true,
    });
    expect(spec({ inbox_days: 7, require_token: true })).toMatchObject({
      require_token: true,
      tokens_by_default: false,
    });
    expect(spec({ inbox_days: 7, allow_unsigned_recipients: true })).toMatchObject({
      require_token: false,
      allow_unsigned_recipients: true,
      tokens_by_default: false,
    });
    // Plain web keys and mobile inbox keys keep the spec's default: no tokens unless asked.
    expect(spec({})).toMatchObject({ require_token: false, tokens_by_default: false });
    expect(resolveKeySpec({ kind: 'live', client: 'mobile', inbox_days: 7 }, now)).toMatchObject({
      require_token: false,
      tokens_by_default: false,
    });
  });

  it('refuses what would hide the choice, naming the field', () => {
    expect(refusal({ inbox_days: 7, require_token: false })).toMatchObject({
      field: 'require_token',
      message: expect.stringMatching(/opt out explicitly with allow_unsigned_recipients/),
    });
    expect(
      refusal({ inbox_days: 7, require_token: true, allow_unsigned_recipients: true }),
    ).toMatchObject({
      field: 'allow_unsigned_recipients',
    });
    expect(refusal({ allow_unsigned_recipients: true })).toMatchObject({
      field: 'allow_unsigned_recipients',
      message: expect.stringMatching(/is the opt-out for web keys in inbox mode/),
    });
    expect(refusal({ inbox_days: 7, scope: 'dispatch' })).toMatchObject({ field: 'scope' });
    // A dispatch web inbox key is possible only with the opt-out, and flagged.
    expect(
      spec({ inbox_days: 7, scope: 'dispatch', allow_unsigned_recipients: true }),
    ).toMatchObject({
      require_token: false,
    });
  });

  it('flags every web key without tokens in one line: what it allows, how to turn tokens on', () => {
    const key = {
      id: 'k1',
      client: 'web',
      scope: 'both',
      require_token: false,
      allow_unsigned_recipients: false,
      inbox_days: null,
      revoked_at: null,
    } as const;
    expect(unsignedRecipientsLine(key)).toBe(
      "No recipient tokens: anyone holding this public web key and a user's id can open that user's socket and receive their live events. Turn tokens on: `key require-token --key k1` (dashboard: Require tokens).",
    );
    expect(unsignedRecipientsLine({ ...key, inbox_days: 3, allow_unsigned_recipients: true })).toBe(
      "Created without recipient tokens on purpose (allow_unsigned_recipients): anyone holding this public web key and a user's id can open that user's socket, read their stored inbox (3 days) and mark it read. Turn tokens on: `key require-token --key k1` (dashboard: Require tokens).",
    );
    expect(unsignedRecipientsLine({ ...key, scope: 'dispatch', inbox_days: 3 })).toMatch(
      /read that user's stored inbox and mark it read \(\/inbox\/\*\); a dispatch key cannot require tokens/,
    );
    expect(unsignedRecipientsLine({ ...key, scope: 'dispatch' })).toBeNull();
    expect(unsignedRecipientsLine({ ...key, require_token: true })).toBeNull();
    expect(unsignedRecipientsLine({ ...key, client: 'mobile' })).toBeNull();
    expect(unsignedRecipientsLine({ ...key, revoked_at: new Date() })).toBeNull();
  });
});

describe('normalizeDomain', () => {
  it.each([
    ['https://app.example.com', 'live', 'https://app.example.com'],
    ['HTTPS://App.EXAMPLE.com', 'live', 'https://app.example.com'],
    ['https://app.example.com/', 'live', 'https://app.example.com'],
    ['  https://app.example.com  ', 'live', 'https://app.example.com'],
    ['https://app.example.com:443', 'live', 'https://app.example.com'],
    ['https://app.example.com:8443', 'live', 'https://app.example.com:8443'],
    ['https://127.0.0.1:8443', 'live', 'https://127.0.0.1:8443'],
    ['https://[::1]:8443', 'live', 'https://[::1]:8443'],
    ['https://bücher.example', 'live', 'https://xn--bcher-kva.example'],
    ['http://localhost:3000', 'test', 'http://localhost:3000'],
    ['http://LOCALHOST', 'test', 'http://localhost'],
    ['http://localhost:80', 'test', 'http://localhost'],
  ] as const)('%s (%s key) becomes %s', (input, kind, origin) => {
    expect(normalizeDomain(input, kind)).toBe(origin);
  });

  it.each([
    ['', 'live', /must not be empty/],
    ['app.example.com', 'live', /must start with https:\/\//],
    ['//app.example.com', 'live', /must start with https:\/\//],
    ['ftp://app.example.com', 'live', /must use https:\/\//],
    [
      'http://app.example.com',
      'test',
      /http is accepted only for http:\/\/localhost.*https:\/\/app\.example\.com/,
    ],
    ['http://127.0.0.1:3000', 'test', /http is accepted only for http:\/\/localhost/],
    ['http://localhost:3000', 'live', /only for test keys/],
    ['https://app.example.com/app', 'live', /without path.*write https:\/\/app\.example\.com/],
    ['https://app.example.com?x=1', 'live', /without path, query or fragment/],
    ['https://app.example.com/?', 'live', /without path, query or fragment/],
    ['https://app.example.com#top', 'live', /without path, query or fragment/],
    ['https://*.example.com', 'live', /wildcards are not allowed/],
    ['*', 'live', /wildcards are not allowed/],
    ['https://user:pw@app.example.com', 'live', /user name or password/],
    ['https://app example.com', 'live', /spaces/],
    ['https://app.exam\tple.com', 'live', /control characters/],
    ['https://', 'live', /not a valid origin/],
    ['https://app.example.com:99999', 'live', /not a valid origin/],
  ] as const)('refuses %j for a %s key', (input, kind, message) => {
    const err = catchError(() => normalizeDomain(input, kind));
    expect(err).toBeInstanceOf(HeraldError);
    expect(err.field).toBe('domain');
    expect(err.message).toMatch(/^domain /);
    expect(err.message).toMatch(message);
  });

  it(`accepts a host of ${MAX_HOST_LENGTH} characters and refuses one more`, () => {
    const host = (length: number) =>
      `${'a'.repeat(length - 4)}.com`.replace(/a{63}/g, `${'a'.repeat(62)}.`);
    const longest = host(MAX_HOST_LENGTH);
    expect(longest).toHaveLength(MAX_HOST_LENGTH);
    expect(normalizeDomain(`https://${longest}`, 'live')).toBe(`https://${longest}`);
    const tooLong = host(MAX_HOST_LENGTH + 1);
    expect(tooLong).toHaveLength(MAX_HOST_LENGTH + 1);
    expect(catchError(() => normalizeDomain(`https://${tooLong}`, 'live')).message).toMatch(
      /longer than 253/,
    );
  });
});

function catchError(fn: () => unknown): HeraldError {
  try {
    fn();
  } catch (err) {
    if (err instanceof HeraldError) return err;
    throw err;
  }
  throw new Error('expected a HeraldError');
}
