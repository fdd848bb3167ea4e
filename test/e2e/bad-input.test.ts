import { openSocket, post } from '@herald/testkit';
import { beforeAll, describe, expect, it } from 'vitest';
import { eventually, newTenant, recipient, type Tenant, useStack } from './fixtures.js';

const LIMIT = 1024;
const RECIPIENTS_REFUSED: Array<[string, unknown]> = [
  ['UUID v1', 'c232ab00-9414-11ec-b3c8-9f6bdeced846'],
  ['UUID v3', 'a3bb189e-8bf9-3888-9912-ace4e6543002'],
  ['UUID v5', '886313e1-3b8a-5372-9b90-0c9aee199e5d'],
  ['nil UUID', '00000000-0000-0000-0000-000000000000'],
  ['variant c', '3f2c1b9a-1d2e-4f3a-c1b2-0a9b8c7d6e5f'],
  ['variant 7', '3f2c1b9a-1d2e-4f3a-71b2-0a9b8c7d6e5f'],
  ['too short', '3f2c1b9a-1d2e-4f3a-91b2-0a9b8c7d6e5'],
  ['too long', '3f2c1b9a-1d2e-4f3a-91b2-0a9b8c7d6e5f0'],
  ['no dashes', '3f2c1b9a1d2e4f3a91b20a9b8c7d6e5f'],
  ['garbage', 'not-a-uuid'],
  ['empty', ''],
  ['a number', 42],
];

describe('bad input is refused with a status, a code and the field at fault', () => {
  const stack = useStack({ env: { 'ingress-api': { PAYLOAD_LIMIT_BYTES: String(LIMIT) } } });
  let tenant: Tenant;
  let web: Tenant;
  let revoked: Tenant;
  const body = (over: Record<string, unknown>) => ({
    recipient: recipient(),
    payload: { ok: 1 },
    api_key: tenant.key.key,
    client: 'mobile',
    ...over,
  });
  const send = (b: unknown, opts = {}) => post(stack().baseUrl, stack().ca, b, opts);

  beforeAll(async () => {
    tenant = await newTenant(stack());
    web = await newTenant(stack(), 'web', 'https://app.example.com');
    revoked = await newTenant(stack());
    await stack().revokeKey(revoked.key.id);
  });

  describe('POST /notify', () => {
    it.each(['recipient', 'payload', 'client'])('missing %s: 400 missing_field', async (field) => {
      const b = body({});
      delete (b as Record<string, unknown>)[field];
      const res = await send(b);
      expect(res.status).toBe(400);
      expect(res.body.error).toMatchObject({ code: 'missing_field', field });
      expect(res.body.error.message).toMatch(field);
    });

    it('missing api_key: 401 missing_api_key', async () => {
      const b = body({});
      delete (b as Record<string, unknown>).api_key;
      const res = await send(b);
      expect(res.status).toBe(401);
      expect(res.body.error).toMatchObject({ code: 'missing_api_key', field: 'api_key' });
    });

    it.each(RECIPIENTS_REFUSED)('recipient %s: 400 invalid_recipient', async (_name, value) => {
      const res = await send(body({ recipient: value }));
      expect(res.status).toBe(400);
      expect(res.body.error).toMatchObject({ code: 'invalid_recipient', field: 'recipient' });
      expect(res.body.error.message).toMatch(/UUID v4/);
    });

    it.each(['desktop', 'WEB', '', 7])('client %j: 400 invalid_client', async (client) => {
      const res = await send(body({ client }));
      expect(res.status).toBe(400);
      expect(res.body.error).toMatchObject({ code: 'invalid_client', field: 'client' });
    });

    it('body not JSON: 400 invalid_json', async () => {
      const res = await send(undefined, { raw: '{"recipient": nope' });
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe('invalid_json');
    });

    it('JSON that is not an object: 400 invalid_json', async () => {
      const res = await send([1, 2]);
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe('invalid_json');
    });

    it('wrong content type: 400 unsupported_content_type', async () => {
      const res = await send(body({}), { headers: { 'content-type': 'text/plain' } });
      expect(res.status).toBe(400);
      expect(res.body.error).toMatchObject({
        code: 'unsupported_content_type',
        field: 'Content-Type',
      });
    });

    it('payload exactly at the limit is accepted; one byte over gives 413 payload_too_large', async () => {
      // {"s":"xxx..."} sized to exactly LIMIT bytes.
      const at = { s: 'x'.repeat(LIMIT - 8) };
      expect(JSON.stringify(at)).toHaveLength(LIMIT);
      const ok = await send(body({ payload: at }));
      expect(ok.status).toBe(202);
      const over = await send(body({ payload: { s: 'x'.repeat(LIMIT - 7) } }));
      expect(over.status).toBe(413);
      expect(over.body.error).toMatchObject({ code: 'payload_too_large', field: 'payload' });
      expect(over.body.error.message).toMatch(String(LIMIT));
    });

    it.each([
      ['a number', 42],
      ['an array', ['hk_live_x']],
      ['null', null],
      ['an empty string', ''],
    ])('api_key that is %s: 401 invalid_api_key, as for an unknown key', async (_n, k) => {
      const res = await send(body({ api_key: k }));
      expect(res.status).toBe(401);
      expect(res.body.error).toMatchObject({ code: 'invalid_api_key', field: 'api_key' });
    });

    it('unknown key: 401 invalid_api_key', async () => {
      const res = await send(body({ api_key: 'hk_test_thisisnotakeythisisnotakeythisisnot' }));
      expect(res.status).toBe(401);
      expect(res.body.error).toMatchObject({ code: 'invalid_api_key', field: 'api_key' });
    });

    it('revoked key: 401 key_revoked', async () => {
      const res = await send(body({ api_key: revoked.key.key }));
      expect(res.status).toBe(401);
      expect(res.body.error).toMatchObject({ code: 'key_revoked', field: 'api_key' });
    });

    it('a key revoked while cached stops working at once', async () => {
      const t = await newTenant(stack());
      const b = { recipient: recipient(), payload: 1, api_key: t.key.key, client: 'mobile' };
      expect((await send(b)).status).toBe(202); // now cached by ingress
      await stack().revokeKey(t.key.id);
      await eventually(async () => (await send(b)).status === 401, 'revoked key refused', 2000);
    });

    it('web key with a foreign Origin: 403 origin_mismatch; with its own: accepted', async () => {
      const b = { recipient: recipient(), payload: 1, api_key: web.key.key, client: 'web' };
      const bad = await send(b, { headers: { origin: 'https://evil.example.com' } });
      expect(bad.status).toBe(403);
      expect(bad.body.error).toMatchObject({ code: 'origin_mismatch', field: 'Origin' });
      const none = await send(b);
      expect(none.status).toBe(403);
      expect(none.body.error.code).toBe('origin_mismatch');
      const good = await send(b, { headers: { origin: 'https://app.example.com' } });
      expect(good.status).toBe(202);
    });
  });

  describe('wss /ws/connect', () => {
    type Case = [
      string,
      () => { query?: string; apiKey?: string; origin?: string; client?: 'web' | 'mobile' },
      number,
      string,
    ];
    const q = (o: Record<string, string>) => new URLSearchParams(o).toString();
    const cases: Case[] = [
      [
        'missing recipient',
        () => ({ query: q({ api_key: tenant.key.key, client: 'mobile' }) }),
        400,
        'missing_field',
      ],
      [
        'bad recipient',
        () => ({
          query: q({
            api_key: tenant.key.key,
            recipient: 'c232ab00-9414-11ec-b3c8-9f6bdeced846',
            client: 'mobile',
          }),
        }),
        400,
        'invalid_recipient',
      ],
      [
        'bad client',
        () => ({ query: q({ api_key: tenant.key.key, recipient: recipient(), client: 'tv' }) }),
        400,
        'invalid_client',
      ],
      [
        'missing key',
        () => ({ query: q({ recipient: recipient(), client: 'mobile' }) }),
        401,
        'missing_api_key',
      ],
      [
        'empty key',
        () => ({ query: q({ api_key: '', recipient: recipient(), client: 'mobile' }) }),
        401,
        'invalid_api_key',
      ],
      [
        'key given twice (an array)',
        () => ({
          query: `api_key=${tenant.key.key}&api_key=${tenant.key.key}&${q({ recipient: recipient(), client: 'mobile' })}`,
        }),
        401,
        'invalid_api_key',
      ],
      [
        'unknown key',
        () => ({ apiKey: 'hk_test_thisisnotakeythisisnotakeythisisnot' }),
        401,
        'invalid_api_key',
      ],
      ['revoked key', () => ({ apiKey: revoked.key.key }), 401, 'key_revoked'],
      [
        'web key, foreign Origin',
        () => ({ apiKey: web.key.key, client: 'web', origin: 'https://evil.example.com' }),
        403,
        'origin_mismatch',
      ],
    ];

    it.each(cases)('plain: %s → HTTP %i %s', async (_n, make, status, code) => {
      const c = make();
      const sock = openSocket(stack().wsUrl, stack().ca, {
        apiKey: c.apiKey ?? '',
        recipient: recipient(),
        client: c.client ?? 'mobile',
        ...c,
      });
      const end = await sock.ended;
      expect(end.httpStatus).toBe(status);
      expect(JSON.parse(end.httpBody ?? '{}').error.code).toBe(code);
    });

    it.each(cases)(
      'herald.v1: %s → close %i+4000 with an error frame',
      async (_n, make, status, code) => {
        const c = make();
        const sock = openSocket(stack().wsUrl, stack().ca, {
          apiKey: c.apiKey ?? '',
          recipient: recipient(),
          client: c.client ?? 'mobile',
          v1: true,
          ...c,
        });
        const end = await sock.ended;
        expect(end.code).toBe(4000 + status);
        expect(JSON.parse(end.reason).code).toBe(code);
        expect(sock.frames[0]?.envelope).toMatchObject({ type: 'error', error: { code } });
      },
    );

    it('web key with its own Origin connects', async () => {
      const sock = openSocket(stack().wsUrl, stack().ca, {
        apiKey: web.key.key,
        recipient: recipient(),
        client: 'web',
        origin: 'https://app.example.com',
      });
      await sock.opened;
      await sock.close();
    });
  });
});
