import { createServer } from 'node:net';
import type { HeraldError } from '@herald/sdk';
import { describe, expect, it } from 'vitest';
import { eventually, recipient, type SdkStack, sleep } from './context.js';

/** A loopback port nothing listens on (taken, then released). */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

export function errorTests(ctx: () => SdkStack): void {
  describe('onError and refused sockets (Node)', () => {
    it.each([
      ['invalid_api_key', 4401],
      ['origin_mismatch', 4403],
    ] as const)(
      '%s: many refused sockets, none ever shows as connected',
      async (code, closeCode) => {
        const { herald, runtime, newKey } = ctx();
        // origin_mismatch: a web key whose domain Node's ws does not send as Origin.
        const apiKey =
          code === 'invalid_api_key'
            ? 'hk_test_not-a-key-anyone-issued-0123456789'
            : (await newKey({ client: 'web', domain: 'https://app.example.com' })).key;
        const rt = runtime();
        const h = herald({ apiKey, client: code === 'invalid_api_key' ? 'mobile' : 'web' }, rt);
        const states: string[] = [];
        h.onConnectionChange((s) => states.push(s));
        const errors: HeraldError[] = [];
        h.onError((e) => errors.push(e));
        const subs = Array.from({ length: 8 }, () => h.subscribe(recipient()));
        await eventually(() => errors.length === subs.length, 'every refusal', 20_000);
        expect(errors.map((e) => [e.code, e.closeCode, e.kind])).toEqual(
          subs.map(() => [code, closeCode, 'refused']),
        );
        // Past the accept delay: a socket wrongly taken as accepted would have flipped by now.
        await sleep(1500);
        expect(states).toEqual([]);
        expect(rt.wire).toHaveLength(subs.length);
      },
    );

    it('a wsUrl pointing at ingress-api (baseUrl) is a wrong endpoint: one error, no endless retry', async () => {
      const { herald, runtime, stack } = ctx();
      const rt = runtime();
      // What `new Herald({ baseUrl })` alone does: the socket URL derived from the ingress URL.
      const h = herald({ wsUrl: undefined, baseUrl: stack.baseUrl }, rt);
      const errors: HeraldError[] = [];
      h.onError((e) => errors.push(e));
      const sub = h.subscribe(recipient());
      const subErrors: string[] = [];
      sub.onError((e) => subErrors.push(e.code));
      await eventually(() => errors.length === 1, 'the wrong-endpoint error', 20_000);
      expect(errors[0]).toMatchObject({ code: 'wrong_endpoint', kind: 'wrong_endpoint' });
      expect(errors[0]?.message).toContain(`${stack.baseUrl.replace('https', 'wss')}/ws/connect`);
      expect(errors[0]?.message).toContain('options.wsUrl');
      const attempts = rt.wire.length;
      // Backoff cap is 400 ms here: several retries would have happened by now.
      await sleep(2000);
      expect(rt.wire.length).toBe(attempts);
      expect(attempts).toBeLessThanOrEqual(2);
      expect(subErrors).toEqual(['wrong_endpoint']);
    });

    it("without the stack's CA trusted, onError and notify name the untrusted certificate and how to trust it", async () => {
      const { herald, key } = ctx();
      // Node's own fetch and the ws package, as an app that set no NODE_EXTRA_CA_CERTS has.
      const h = herald({ fetch: undefined, WebSocket: undefined });
      const errors: HeraldError[] = [];
      h.onError((e) => errors.push(e));
      h.subscribe(recipient());
      await eventually(() => errors.length === 1, 'the network error', 20_000);
      const trust =
        /TLS certificate is not trusted here \(.*certificate.*\): trust the CA that issued it\. For make dev's local CA, start Node with NODE_EXTRA_CA_CERTS=\.data\/tls\/ca\.crt/;
      expect(errors[0]).toMatchObject({ code: 'network_error', kind: 'network', field: 'wsUrl' });
      expect(errors[0]?.message).toMatch(trust);
      const sent = await h.notify({ recipient: recipient(), payload: { tls: 'untrusted' } });
      expect(sent.error).toMatchObject({ code: 'network_error', kind: 'network' });
      expect(sent.error?.message).toMatch(trust);
      for (const text of [errors[0]?.message, sent.error?.message])
        expect(text).not.toContain(key.key);
    });

    it('plain ws:// and http:// against the TLS ports are named, with the scheme to use', async () => {
      const { herald, stack } = ctx();
      const edge = new URL(stack.wsUrl).host;
      const ingress = new URL(stack.baseUrl).host;
      const h = herald({
        wsUrl: `ws://${edge}`,
        baseUrl: `http://${ingress}`,
        fetch: undefined,
        WebSocket: undefined,
      });
      const errors: HeraldError[] = [];
      h.onError((e) => errors.push(e));
      h.subscribe(recipient());
      await eventually(() => errors.length === 1, 'the network error', 20_000);
      expect(errors[0]?.message).toMatch(
        new RegExp(
          `^Could not open a socket at ws://${edge}/ws/connect: ${edge} speaks TLS, and ws:// is plain \\(.+\\): use wss://${edge}\\. Retrying`,
        ),
      );
      const sent = await h.notify({ recipient: recipient(), payload: 1 });
      expect(sent.error?.message).toMatch(
        new RegExp(
          `^Could not reach Herald at http://${ingress}: ${ingress} speaks TLS, and http:// is plain \\(.+\\): use https://${ingress}$`,
        ),
      );
    });

    it('an unreachable wsUrl is a network error, reported once while the SDK keeps retrying', async () => {
      const { herald, runtime } = ctx();
      const rt = runtime();
      const h = herald({ wsUrl: `wss://127.0.0.1:${await closedPort()}` }, rt);
      const errors: HeraldError[] = [];
      h.onError((e) => errors.push(e));
      h.subscribe(recipient());
      await eventually(() => errors.length === 1, 'the network error', 20_000);
      await eventually(() => rt.wire.length >= 4, 'retries', 20_000);
      expect(errors.map((e) => [e.code, e.kind])).toEqual([['network_error', 'network']]);
    });
  });
}
