import { randomUUID } from 'node:crypto';
import type { VerifiedKey } from '@herald/proto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { answerFor, KEYS, key } from './support/auth-responder.js';
import {
  type IngressFixture,
  newRecipient,
  notifyBody,
  startIngressFixture,
} from './support/fixture.js';
import { request } from './support/http.js';

let fx: IngressFixture;
beforeAll(async () => {
  fx = await startIngressFixture();
});
afterAll(async () => {
  await fx?.stop();
});

function keyWith(over: Partial<VerifiedKey>): string {
  const apiKey = `hk_${over.kind ?? 'live'}_${randomUUID()}`;
  answerFor(apiKey, key(`key-${randomUUID()}`, over));
  return apiKey;
}

const post = (body: Record<string, unknown>, origin?: string) =>
  request(fx.baseUrl, { body, headers: origin === undefined ? {} : { origin } });

describe('Origin of a web key on HTTP dispatch', () => {
  const DOMAIN = 'https://example.com';
  let apiKey: string;
  beforeAll(() => {
    apiKey = keyWith({ client: 'web', domain: DOMAIN });
  });
  const body = () => notifyBody(newRecipient(), { api_key: apiKey, client: 'web' });

  it('accepts the exact registered origin', async () => {
    expect((await post(body(), DOMAIN)).status).toBe(202);
  });

  const refused: Array<[string, string | undefined]> = [
    ['another origin', 'https://other.example.org'],
    ['no Origin', undefined],
    ['another scheme', 'http://example.com'],
    ['another port', 'https://example.com:8443'],
    ['a look-alike prefix', 'https://evil-example.com'],
    ['the domain as a prefix of another', 'https://example.com.evil.io'],
  ];
  for (const [name, origin] of refused) {
    it(`refuses ${name} with 403 origin_mismatch`, async () => {
      const res = await post(body(), origin);
      expect(res.status).toBe(403);
      expect(res.json.error).toMatchObject({ code: 'origin_mismatch', field: 'Origin' });
      expect(res.json.error.message).toContain(DOMAIN);
    });
  }

  it('asks no Origin of a mobile key, and ignores one sent', async () => {
    expect((await post(notifyBody(newRecipient()))).status).toBe(202);
    expect((await post(notifyBody(newRecipient()), 'https://anywhere.io')).status).toBe(202);
  });

  it('refuses a key used as the other client type with 403 client_mismatch', async () => {
    const res = await post(notifyBody(newRecipient(), { api_key: KEYS.mobile, client: 'web' }));
    expect(res.status).toBe(403);
    expect(res.json.error).toMatchObject({ code: 'client_mismatch', field: 'client' });
  });
});

describe('plan lapse', () => {
  it("refuses a Live key whose account's paid period has ended with 403 plan_inactive", async () => {
    const apiKey = keyWith({ plan: 'hobby', plan_until: Date.now() - 1 });
    const res = await post(notifyBody(newRecipient(), { api_key: apiKey }));
    expect(res.status).toBe(403);
    expect(res.json.error).toMatchObject({ code: 'plan_inactive', field: 'api_key' });
    expect(res.json.error.message).toMatch(/hobby plan lapsed at .*renew/);
  });

  it('accepts a Live key until the period ends, and a Test key whatever plan_until says', async () => {
    const live = keyWith({ plan: 'hobby', plan_until: Date.now() + 60_000 });
    expect((await post(notifyBody(newRecipient(), { api_key: live }))).status).toBe(202);
    const test = keyWith({
      kind: 'test',
      plan: 'free',
      plan_until: Date.now() - 1,
      expires_at: Date.now() + 60_000,
    });
    expect((await post(notifyBody(newRecipient(), { api_key: test }))).status).toBe(202);
  });
});
