import http from 'node:http';
import { subjects } from '@herald/proto';
import type { Subscription } from 'nats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KEYS } from './support/auth-responder.js';
import {
  type IngressFixture,
  newRecipient,
  notifyBody,
  queuedMessages,
  startIngressFixture,
} from './support/fixture.js';
import { request } from './support/http.js';

const LIMIT = 3;
let fx: IngressFixture;
/** Every rt.auth.verify request that crossed NATS: each one is a lookup in auth. */
let lookups: Subscription;
let lookupsSeen = 0;

beforeAll(async () => {
  fx = await startIngressFixture({
    AUTH_FAIL_LIMIT: String(LIMIT),
    AUTH_FAIL_WINDOW_MS: '600000',
    KEY_NEGATIVE_CACHE_TTL_MS: '300000',
  });
  lookups = fx.peer.subscribe(subjects.authVerify, { callback: () => lookupsSeen++ });
  await fx.peer.flush();
});
afterAll(async () => {
  lookups?.unsubscribe();
  await fx?.stop();
});

/** Each test sends from its own loopback address, so their failure counts stay apart. */
let lastOctet = 10;
const newSource = () => `127.0.0.${++lastOctet}`;
const send = (body: unknown, localAddress: string, agent?: http.Agent) =>
  request(fx.baseUrl, { body, localAddress, ...(agent ? { agent } : {}) });
/** One keep-alive connection from `localAddress`, as a sender's HTTP client keeps. */
const connection = (localAddress: string) =>
  new http.Agent({ keepAlive: true, maxSockets: 1, localAddress } as http.AgentOptions);
/** Resolves with the error a request met (the connection was dropped), or fails the test. */
const dropped = (p: Promise<unknown>) =>
  p.then(
    () => {
      throw new Error('the request was answered');
    },
    (err: NodeJS.ErrnoException) => err.code,
  );
const randomKey = () => `hk_live_${crypto.randomUUID().replaceAll('-', '')}`;

/** Lookups made so far; a flush first, so every request already sent has been counted. */
async function lookupCount(): Promise<number> {
  await fx.nc.flush();
  await fx.peer.flush();
  return lookupsSeen;
}

describe('failed authentications per source address', () => {
  it(`refuses a source with 403 auth_failures and Retry-After after ${LIMIT} failures, not before`, async () => {
    const source = newSource();
    const agent = connection(source);
    try {
      const bad = () => send(notifyBody(newRecipient(), { api_key: randomKey() }), source, agent);
      for (let i = 0; i < LIMIT - 1; i++) expect((await bad()).status).toBe(401);
      // One failure short of the limit, a valid key is still served.
      expect((await send(notifyBody(newRecipient()), source, agent)).status).toBe(202);
      expect((await bad()).status).toBe(401);
      // At the limit: refused, even with a valid key, nothing stored, and the connection closed.
      const recipient = newRecipient();
      const refused = await send(notifyBody(recipient), source, agent);
      expect(refused.status).toBe(403);
      expect(refused.json.error).toMatchObject({ code: 'auth_failures', field: 'api_key' });
      const retryAfter = Number(refused.headers['retry-after']);
      expect(retryAfter).toBeGreaterThan(0);
      expect(retryAfter).toBeLessThanOrEqual(600);
      expect(refused.headers.connection).toBe('close');
      expect(await queuedMessages(fx.jsm, recipient)).toHaveLength(0);
    } finally {
      agent.destroy();
    }
  });

  it("drops a blocked source's new connections before any lookup, and keeps serving others", async () => {
    const source = newSource();
    for (let i = 0; i < LIMIT; i++)
      await send(notifyBody(newRecipient(), { api_key: randomKey() }), source);
    const before = await lookupCount();
    for (let i = 0; i < 20; i++) {
      const code = await dropped(
        send(notifyBody(newRecipient(), { api_key: randomKey() }), source),
      );
      expect(['ECONNRESET', 'EPIPE']).toContain(code);
    }
    expect(await lookupCount()).toBe(before);
    expect((await send(notifyBody(newRecipient()), newSource())).status).toBe(202);
  });

  it('counts every kind of 401: malformed, wrongly typed, missing, revoked', async () => {
    const source = newSource();
    const agent = connection(source);
    try {
      const { api_key: _none, ...missing } = notifyBody(newRecipient());
      const status = async (body: unknown) => (await send(body, source, agent)).status;
      expect(await status(notifyBody(newRecipient(), { api_key: 42 }))).toBe(401);
      expect(await status(missing)).toBe(401);
      expect(await status(notifyBody(newRecipient(), { api_key: KEYS.revoked }))).toBe(401);
      expect(await status(notifyBody(newRecipient()))).toBe(403);
    } finally {
      agent.destroy();
    }
  });

  it('does not count refusals that are not about the key', async () => {
    const source = newSource();
    for (let i = 0; i < LIMIT + 2; i++)
      expect((await send(notifyBody('not-a-uuid'), source)).status).toBe(400);
    expect((await send(notifyBody(newRecipient()), source)).status).toBe(202);
  });
});

describe('bad keys cost no lookup', () => {
  it('refuses a malformed key without asking auth', async () => {
    const before = await lookupCount();
    for (const api_key of ['password', 'hk_live_', `hk_live_${'x'.repeat(200)}`, 'hk_live_a b'])
      expect((await send(notifyBody(newRecipient(), { api_key }), newSource())).status).toBe(401);
    expect(await lookupCount()).toBe(before);
  });

  it("reuses auth's refusal of an unknown key instead of asking again", async () => {
    const key = randomKey();
    const before = await lookupCount();
    const first = await send(notifyBody(newRecipient(), { api_key: key }), newSource());
    const again = await send(notifyBody(newRecipient(), { api_key: key }), newSource());
    expect(first.json.error.code).toBe('invalid_api_key');
    expect(again.json).toEqual(first.json);
    expect(await lookupCount()).toBe(before + 1);
  });
});
