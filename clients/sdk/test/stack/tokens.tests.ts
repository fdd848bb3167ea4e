import { createHmac } from 'node:crypto';
import type { HeraldError } from '@herald/sdk';
import { recipientToken } from '@herald/sdk/server';
import { openSocket, post } from '@herald/testkit';
import { describe, expect, it } from 'vitest';
import { eventually, recipient, type SdkStack } from './context.js';

/** An HS256 recipient token, minted with node:crypto as a customer's server might. */
function mint(secret: string, sub: string, lifetimeS: number): string {
  const b64 = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url');
  const exp = Math.floor(Date.now() / 1000) + lifetimeS;
  const head = `${b64({ alg: 'HS256', typ: 'JWT' })}.${b64({ sub, exp })}`;
  return `${head}.${createHmac('sha256', secret).update(head).digest('base64url')}`;
}

export function tokenTests(ctx: () => SdkStack): void {
  describe('recipient tokens (options.token, options.getToken)', () => {
    it('asks getToken before connecting and again before expiry, sending it in-band: the socket stays', async () => {
      const { herald, newKey, stack } = ctx();
      const key = await newKey({ requireToken: true });
      const secret = key.signing_secret as string;
      const asked: string[] = [];
      const minted: string[] = [];
      const logged: string[] = [];
      const log = (...args: unknown[]) => logged.push(JSON.stringify(args));
      const h = herald({
        apiKey: key.key,
        // 4 s tokens: refreshed about 2 s in, well before they lapse.
        getToken: async (r) => {
          asked.push(r);
          const token = mint(secret, r, 4);
          minted.push(token);
          return token;
        },
        logger: { debug: log, warn: log, error: log },
      });
      const to = recipient();
      const states: string[] = [];
      const sub = h.subscribe(to);
      sub.onConnectionChange((s) => states.push(s));
      const got: unknown[] = [];
      sub.listen((p) => got.push(p));
      await eventually(() => sub.connected(), 'connected with the first token');
      const firstExpiry = Date.now() + 4000;
      await eventually(() => asked.length >= 3, 'two refreshes', 20_000);
      // Past the first token's expiry: still the same socket, never disconnected.
      await eventually(() => Date.now() > firstExpiry + 1000, 'the first token lapsed');
      const res = await post(stack.baseUrl, stack.ca, {
        recipient: to,
        payload: { refreshed: true },
        api_key: key.key,
        client: 'mobile',
      });
      expect(res.status).toBe(200);
      await eventually(() => got.length === 1, 'the event after the first token lapsed');
      expect(states).toEqual(['connected']);
      expect(new Set(asked)).toEqual(new Set([to]));
      // Never logged: no token appears in anything the SDK told its logger.
      for (const token of minted) expect(logged.join('\n')).not.toContain(token);
    });

    it('a static options.token connects', async () => {
      const { herald, newKey } = ctx();
      const key = await newKey({ requireToken: true });
      const to = recipient();
      const h = herald({ apiKey: key.key, token: mint(key.signing_secret as string, to, 600) });
      const sub = h.subscribe(to);
      await eventually(() => sub.connected(), 'connected with options.token');
    });

    it('reports a refused token through onError and stops (4403 token_recipient_mismatch)', async () => {
      const { herald, newKey } = ctx();
      const key = await newKey({ requireToken: true });
      const h = herald({
        apiKey: key.key,
        getToken: async () => mint(key.signing_secret as string, recipient(), 600),
      });
      const errors: HeraldError[] = [];
      h.onError((e) => errors.push(e));
      h.subscribe(recipient());
      await eventually(() => errors.length === 1, 'the refusal');
      expect(errors[0]).toMatchObject({
        code: 'token_recipient_mismatch',
        closeCode: 4403,
        kind: 'refused',
      });
    });

    it('a key requiring tokens, without one: onError missing_token (4401)', async () => {
      const { herald, newKey } = ctx();
      const key = await newKey({ requireToken: true });
      const h = herald({ apiKey: key.key });
      const errors: HeraldError[] = [];
      h.onError((e) => errors.push(e));
      h.subscribe(recipient());
      await eventually(() => errors.length === 1, 'the refusal');
      expect(errors[0]).toMatchObject({ code: 'missing_token', closeCode: 4401 });
    });

    it('a getToken that fails is reported (token_unavailable) and asked again', async () => {
      const { herald, newKey } = ctx();
      const key = await newKey({ requireToken: true });
      let calls = 0;
      const h = herald({
        apiKey: key.key,
        getToken: async (r) => {
          calls += 1;
          if (calls === 1) throw new Error('session store down');
          return mint(key.signing_secret as string, r, 600);
        },
      });
      const errors: HeraldError[] = [];
      h.onError((e) => errors.push(e));
      const sub = h.subscribe(recipient());
      await eventually(() => sub.connected(), 'connected on the retry');
      expect(errors.map((e) => [e.code, e.kind])).toEqual([['token_unavailable', 'unavailable']]);
      expect(errors[0]?.message).toContain('session store down');
    });
  });

  describe('recipientToken (@herald/sdk/server) against the edge', () => {
    /** A plain socket with `token`, expected refused: the HTTP status and the error's code. */
    const refusal = async (apiKey: string, to: string, token: string) => {
      const { stack } = ctx();
      const end = await openSocket(stack.wsUrl, stack.ca, { apiKey, recipient: to, token }).ended;
      return { status: end.httpStatus, code: JSON.parse(end.httpBody ?? '{}').error?.code };
    };

    it('is accepted: getToken calling it connects and receives', async () => {
      const { herald, newKey, stack } = ctx();
      const key = await newKey({ requireToken: true });
      const secret = key.signing_secret as string;
      const h = herald({
        apiKey: key.key,
        getToken: (r) => recipientToken({ secret, recipient: r, ttl: '5m' }),
      });
      const to = recipient();
      const sub = h.subscribe(to);
      const got: unknown[] = [];
      sub.listen((p) => got.push(p));
      await eventually(() => sub.connected(), 'connected with a recipientToken token');
      const res = await post(stack.baseUrl, stack.ca, {
        recipient: to,
        payload: { signed: 'by the SDK' },
        api_key: key.key,
        client: 'mobile',
      });
      expect(res.status).toBe(200);
      await eventually(() => got.length === 1, 'the event');
    });

    it('is refused after exp, for another recipient, and with another key’s secret', async () => {
      const { newKey } = ctx();
      const key = await newKey({ requireToken: true });
      const other = await newKey({ requireToken: true });
      const secret = key.signing_secret as string;
      const to = recipient();
      const lapsing = await recipientToken({ secret, recipient: to, ttl: 1 });
      // This stack tolerates no clock skew (TOKEN_CLOCK_SKEW_MS=0): once exp has passed, refused.
      await new Promise((r) => setTimeout(r, 2100));
      expect(await refusal(key.key, to, lapsing)).toEqual({ status: 401, code: 'invalid_token' });
      const theirs = await recipientToken({ secret, recipient: recipient() });
      expect(await refusal(key.key, to, theirs)).toEqual({
        status: 403,
        code: 'token_recipient_mismatch',
      });
      const wrongKey = await recipientToken({
        secret: other.signing_secret as string,
        recipient: to,
      });
      expect(await refusal(key.key, to, wrongKey)).toEqual({ status: 401, code: 'invalid_token' });
      // And the same token, fresh and for this recipient, opens the socket.
      const { stack } = ctx();
      const ok = openSocket(stack.wsUrl, stack.ca, {
        apiKey: key.key,
        recipient: to,
        token: await recipientToken({ secret, recipient: to }),
      });
      await ok.opened;
      await ok.close();
    });
  });
}
