import { readFileSync } from 'node:fs';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { makeCerts, request, type TestCerts } from '@herald/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MpesaProvider } from '../src/mpesa/provider.js';
import { CALLBACK_ACK } from '../src/mpesa/schemas.js';
import { type CallbackResult, ProviderError } from '../src/provider.js';
import {
  type DarajaSimulator,
  SANDBOX_PASSKEY,
  SANDBOX_SHORTCODE,
  SIM_CONSUMER_KEY,
  SIM_CONSUMER_SECRET,
  startDarajaSimulator,
  TEST_PHONES,
} from '../src/simulator/index.js';

// The client against the simulator over real HTTP, and the simulator's callbacks to a real
// HTTPS receiver, as Herald's auth service receives them.
let certs: TestCerts;
let sim: DarajaSimulator;
let receiver: https.Server;
let callbackBase: string;
const received: unknown[] = [];
let provider: MpesaProvider;

beforeAll(async () => {
  certs = await makeCerts();
  receiver = https.createServer(
    { cert: readFileSync(certs.certFile), key: readFileSync(certs.keyFile) },
    (req, res) => {
      let text = '';
      req.setEncoding('utf8');
      req.on('data', (c: string) => {
        text += c;
      });
      req.on('end', () => {
        received.push({ url: req.url, body: JSON.parse(text) });
        res.writeHead(200, { 'Content-Type': 'application/json' });
        res.end(JSON.stringify(CALLBACK_ACK));
      });
    },
  );
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  callbackBase = `https://localhost:${(receiver.address() as AddressInfo).port}`;
  sim = await startDarajaSimulator({ resultDelayMs: null, ca: certs.ca, lateCallbackMs: 50 });
  provider = new MpesaProvider({
    baseUrl: sim.url,
    consumerKey: SIM_CONSUMER_KEY,
    consumerSecret: SIM_CONSUMER_SECRET,
    shortcode: SANDBOX_SHORTCODE,
    passkey: SANDBOX_PASSKEY,
  });
});

afterAll(async () => {
  await sim?.close();
  await new Promise<void>((resolve) => (receiver ? receiver.close(() => resolve()) : resolve()));
});

function callbacksFor(path: string): { url: string; body: unknown }[] {
  return (received as { url: string; body: unknown }[]).filter((r) => r.url === path);
}

async function waitFor(check: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 20_000;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

async function pay(phone: string, path: string) {
  return provider.initiate({
    amount: 1200,
    phone,
    reference: 'HERALD-HOBBY-PLAN',
    description: 'Herald Hobby plan, one month',
    callbackUrl: `${callbackBase}${path}`,
  });
}

describe('the M-Pesa provider against the Daraja simulator', () => {
  it('pushes, answers "being processed" while pending, then the result; the callback reads back', async () => {
    const started = await pay(TEST_PHONES.succeeds, '/cb/ok');
    expect(started.status).toBe('pending');
    expect(started.providerRef).toMatch(/^ws_CO_/);
    const push = sim.push(started.providerRef);
    // Truncated to Daraja's limits: AccountReference 12, TransactionDesc 13.
    expect(push?.accountReference).toBe('HERALD-HOBBY');
    expect(await provider.query(started.providerRef)).toEqual({
      status: 'pending',
      detail: 'The transaction is being processed',
    });
    await sim.settle(started.providerRef);
    expect(await provider.query(started.providerRef)).toEqual({ status: 'succeeded', code: '0' });
    const [cb] = callbacksFor('/cb/ok');
    const read: CallbackResult = provider.verifyCallback(cb?.body);
    expect(read).toMatchObject({
      providerRef: started.providerRef,
      result: { status: 'succeeded' },
      amount: 1200,
      phone: TEST_PHONES.succeeds,
    });
    expect(read.receipt).toMatch(/^[A-Z0-9]{10}$/);
  });

  it.each([
    [TEST_PHONES.cancelled, 'cancelled', '1032'],
    [TEST_PHONES.timesOut, 'timed_out', '1037'],
    [TEST_PHONES.insufficientFunds, 'failed', '1'],
    [TEST_PHONES.wrongPin, 'failed', '2001'],
  ])('test number %s ends %s (%s) by query and by callback', async (phone, status, code) => {
    const path = `/cb/${phone}`;
    const started = await pay(phone, path);
    await sim.settle(started.providerRef);
    const queried = await provider.query(started.providerRef);
    expect(queried).toMatchObject({ status, code });
    expect(queried.status !== 'pending' && queried.reason).toBeTruthy();
    const read = provider.verifyCallback(callbacksFor(path)[0]?.body);
    expect(read.result).toEqual(queried);
  });

  it('delivers callbacks missing, duplicate or late as asked', async () => {
    sim.nextPush({ callback: 'missing' });
    const missing = await pay(TEST_PHONES.succeeds, '/cb/missing');
    await sim.settle(missing.providerRef);
    expect((await provider.query(missing.providerRef)).status).toBe('succeeded');

    sim.nextPush({ callback: 'duplicate' });
    const dup = await pay(TEST_PHONES.succeeds, '/cb/dup');
    await sim.settle(dup.providerRef);
    expect(callbacksFor('/cb/dup')).toHaveLength(2);

    sim.nextPush({ callback: 'late' });
    const late = await pay(TEST_PHONES.cancelled, '/cb/late');
    await sim.settle(late.providerRef);
    // The query knows the result before the callback comes.
    expect((await provider.query(late.providerRef)).status).toBe('cancelled');
    await waitFor(() => callbacksFor('/cb/late').length === 1, 'the late callback');
    expect(callbacksFor('/cb/missing')).toHaveLength(0);
  });

  it('caches the OAuth token, and fetches a new one when Daraja revokes it', async () => {
    const before = sim.tokenRequests();
    await pay(TEST_PHONES.succeeds, '/cb/t1');
    await pay(TEST_PHONES.succeeds, '/cb/t2');
    expect(sim.tokenRequests()).toBe(before);
    sim.revokeTokens();
    await pay(TEST_PHONES.succeeds, '/cb/t3');
    expect(sim.tokenRequests()).toBe(before + 1);
  });

  it('refuses wrong credentials, a wrong passkey and an http callback URL', async () => {
    const wrongSecret = new MpesaProvider({
      baseUrl: sim.url,
      consumerKey: SIM_CONSUMER_KEY,
      consumerSecret: 'wrong',
      shortcode: SANDBOX_SHORTCODE,
      passkey: SANDBOX_PASSKEY,
    });
    await expect(
      wrongSecret.initiate({
        amount: 1,
        phone: TEST_PHONES.succeeds,
        reference: 'r',
        description: 'd',
        callbackUrl: `${callbackBase}/x`,
      }),
    ).rejects.toThrow(/OAuth token request \(HTTP 400, 400.008.01/);
    const wrongPasskey = new MpesaProvider({
      baseUrl: sim.url,
      consumerKey: SIM_CONSUMER_KEY,
      consumerSecret: SIM_CONSUMER_SECRET,
      shortcode: SANDBOX_SHORTCODE,
      passkey: 'not-the-passkey',
    });
    const err = await wrongPasskey
      .initiate({
        amount: 1,
        phone: TEST_PHONES.succeeds,
        reference: 'r',
        description: 'd',
        callbackUrl: `${callbackBase}/x`,
      })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ProviderError);
    expect((err as ProviderError).message).toMatch(/Invalid Password/);
    expect((err as ProviderError).retryable).toBe(false);
    await expect(
      provider.initiate({
        amount: 1,
        phone: TEST_PHONES.succeeds,
        reference: 'r',
        description: 'd',
        callbackUrl: 'http://localhost/x',
      }),
    ).rejects.toThrow(/the STK push request is invalid: CallBackURL/);
  });

  it('reports an unreachable Daraja as a retryable ProviderError', async () => {
    const down = new MpesaProvider({
      baseUrl: 'http://127.0.0.1:9',
      consumerKey: 'k',
      consumerSecret: 's',
      shortcode: SANDBOX_SHORTCODE,
      passkey: 'p',
      timeoutMs: 2000,
    });
    const err = await down.query('ws_CO_x').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ProviderError);
    expect((err as ProviderError).retryable).toBe(true);
  });
});

describe('the simulator over TLS (docker compose dev profile)', () => {
  it('serves its token endpoint over HTTPS with the certificate it is given', async () => {
    const tlsSim = await startDarajaSimulator(
      { resultDelayMs: null },
      {
        tls: {
          cert: readFileSync(certs.certFile, 'utf8'),
          key: readFileSync(certs.keyFile, 'utf8'),
        },
      },
    );
    try {
      expect(tlsSim.url).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
      const port = new URL(tlsSim.url).port;
      const auth = Buffer.from(`${SIM_CONSUMER_KEY}:${SIM_CONSUMER_SECRET}`).toString('base64');
      const answer = await request(
        'GET',
        `https://localhost:${port}/oauth/v1/generate?grant_type=client_credentials`,
        certs.ca,
        undefined,
        { authorization: `Basic ${auth}` },
      );
      expect(answer.status).toBe(200);
      expect(answer.body).toHaveProperty('access_token');
    } finally {
      await tlsSim.close();
    }
  });
});
