import { randomUUID } from 'node:crypto';
import { createLogger, type Serving, serve } from '@herald/kit';
import { subjects } from '@herald/proto';
import { connect, type NatsConnection } from 'nats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createIngress } from '../src/index.js';
import { RATE_BUCKET } from '../src/rate-limiter.js';
import { ACCOUNT_A, answerFor, key, ROOMY_LIMITS } from './support/auth-responder.js';
import {
  type IngressFixture,
  newRecipient,
  notifyBody,
  startIngressFixture,
  testConfig,
} from './support/fixture.js';
import { type Reply, request } from './support/http.js';

// Two ingress instances on one nats-server: the key's bucket is shared through NATS KV.
let fx: IngressFixture;
let secondNc: NatsConnection;
let second: Serving;
let urls: [string, string];

beforeAll(async () => {
  fx = await startIngressFixture();
  secondNc = await connect({ ...fx.nats.connectOptions(), name: 'test-ingress-2' });
  const config = testConfig(fx.nats);
  const ingress = createIngress(config, {
    nc: secondNc,
    logger: createLogger('ingress-api', 'silent'),
  });
  second = await serve(ingress, config, 0);
  urls = [fx.baseUrl, `http://127.0.0.1:${second.port}`];
});

afterAll(async () => {
  await second?.close();
  await secondNc?.close();
  await fx?.stop();
});

/** A key of its own (so tests do not share a bucket) with this rate and burst. */
function rateKey(dispatch_rate: number, dispatch_burst: number, kind: 'live' | 'test' = 'live') {
  const apiKey = `hk_${kind}_${randomUUID()}`;
  answerFor(
    apiKey,
    key(`key-${randomUUID()}`, {
      kind,
      limits: { ...ROOMY_LIMITS, dispatch_rate, dispatch_burst },
    }),
  );
  return apiKey;
}

const dispatch = (url: string, apiKey: string, over: Record<string, unknown> = {}) =>
  request(url, { body: notifyBody(newRecipient(), { api_key: apiKey, ...over }) });

const accepted = (r: Reply) => r.status === 200 || r.status === 202;

describe('the dispatch rate limit across two ingress instances', () => {
  it('creates the shared bucket state with a TTL and one value per key', async () => {
    const { config } = await fx.jsm.streams.info(`KV_${RATE_BUCKET}`);
    expect(config.max_age).toBe(fx.config.RATE_STATE_TTL_MS * 1_000_000);
    expect(config.max_msgs_per_subject).toBe(1);
  });

  it('answers 403 rate_limited with Retry-After once the burst is spent, whichever instance is asked', async () => {
    const apiKey = rateKey(0.5, 4);
    const replies: Reply[] = [];
    for (let i = 0; i < 8; i++) replies.push(await dispatch(urls[i % 2] as string, apiKey));
    // 4 from the burst; at 0.5/s nothing refills within the run, and leases never hand a token twice.
    expect(replies.filter(accepted)).toHaveLength(4);
    const refused = replies.filter((r) => !accepted(r));
    expect(refused.length).toBe(4);
    for (const r of refused) {
      expect(r.status).toBe(403);
      expect(r.json.error).toMatchObject({ code: 'rate_limited', field: 'api_key' });
      expect(r.json.error.message).toMatch(/0\.5\/s sustained, bursts of 4.*Retry-After/);
      expect(Number(r.headers['retry-after'])).toBeGreaterThanOrEqual(1);
      expect(Number.isInteger(Number(r.headers['retry-after']))).toBe(true);
    }
    // Both instances refused some: the state is shared, not per instance.
    const refusedBy = replies.flatMap((r, i) => (accepted(r) ? [] : [i % 2]));
    expect(new Set(refusedBy)).toEqual(new Set([0, 1]));
  });

  it('accepts again after the Retry-After delay', async () => {
    const apiKey = rateKey(2, 1);
    expect(accepted(await dispatch(urls[0], apiKey))).toBe(true);
    const refused = await dispatch(urls[1], apiKey);
    expect(refused.status).toBe(403);
    await new Promise((r) => setTimeout(r, Number(refused.headers['retry-after']) * 1000));
    expect(accepted(await dispatch(urls[1], apiKey))).toBe(true);
  });

  it('keeps the accepted count in a window within burst + rate × T + instances × max held', async () => {
    const RATE = 10;
    const BURST = 5;
    const apiKey = rateKey(RATE, BURST);
    let ok = 0;
    let limited = 0;
    const started = performance.now();
    const deadline = started + 1500;
    // Four senders, two per instance, as fast as the instances answer.
    await Promise.all(
      [0, 1, 2, 3].map(async (n) => {
        while (performance.now() < deadline) {
          const r = await dispatch(urls[n % 2] as string, apiKey);
          if (accepted(r)) ok++;
          else if (r.json?.error?.code === 'rate_limited') limited++;
          else throw new Error(`unexpected ${r.status}: ${r.text}`);
        }
      }),
    );
    const seconds = (performance.now() - started) / 1000;
    // max lease = max(1, floor(RATE × RATE_LEASE_BATCH_MS / 1000)) = 1 token, and max held
    // (the lease and the one renewed ahead) = 1 + floor(1 / 2) = 1 token per instance.
    const bound = BURST + RATE * seconds + 2 * 1;
    expect(ok).toBeLessThanOrEqual(Math.floor(bound));
    expect(ok).toBeGreaterThanOrEqual(BURST);
    expect(limited).toBeGreaterThan(0);
  });

  it('accepts a whole burst of concurrent requests to one instance, and only what refilled beyond it', async () => {
    // The audit's Test key: 10/s, burst 100 (a lease of 1 token at a time). A key not seen
    // lately starts with a full bucket.
    const RATE = 10;
    const BURST = 100;
    const apiKey = rateKey(RATE, BURST, 'test');
    const started = performance.now();
    const replies = await Promise.all(
      Array.from({ length: BURST + 30 }, () => dispatch(urls[0], apiKey)),
    );
    const elapsedMs = performance.now() - started;
    const ok = replies.filter(accepted).length;
    expect(ok).toBeGreaterThanOrEqual(BURST);
    expect(ok).toBeLessThanOrEqual(BURST + Math.floor((RATE * elapsedMs) / 1000));
    for (const r of replies.filter((r) => !accepted(r))) {
      expect(r.status).toBe(403);
      expect(r.json.error.code).toBe('rate_limited');
      // The next token is 1 / RATE s away.
      expect(r.headers['retry-after']).toBe('1');
    }
  });

  it('limits each key on its own', async () => {
    const busy = rateKey(0.5, 1);
    const calm = rateKey(0.5, 1);
    expect(accepted(await dispatch(urls[0], busy))).toBe(true);
    expect((await dispatch(urls[1], busy)).status).toBe(403);
    expect(accepted(await dispatch(urls[1], calm))).toBe(true);
  });

  it('spends no token on a request refused for another reason', async () => {
    const apiKey = rateKey(0.5, 1);
    const mismatch = await dispatch(urls[0], apiKey, { client: 'web' });
    expect(mismatch.json.error.code).toBe('client_mismatch');
    expect(accepted(await dispatch(urls[1], apiKey))).toBe(true);
  });

  it('applies to NATS dispatches too, with Retry-After as a reply header', async () => {
    const apiKey = rateKey(0.5, 1);
    const ask = async () => {
      const msg = await fx.peer.request(
        subjects.dispatch(ACCOUNT_A),
        JSON.stringify(notifyBody(newRecipient(), { api_key: apiKey })),
        { timeout: 5000 },
      );
      return { body: JSON.parse(new TextDecoder().decode(msg.data)), headers: msg.headers };
    };
    expect((await ask()).body.http_status).toBe(202);
    const refused = await ask();
    expect(refused.body).toMatchObject({ http_status: 403, error: { code: 'rate_limited' } });
    expect(Number(refused.headers?.get('Retry-After'))).toBeGreaterThanOrEqual(1);
  });
});
