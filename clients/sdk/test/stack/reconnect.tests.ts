import { DispatchStatus, type HeraldError } from '@herald/sdk';
import { describe, expect, it } from 'vitest';
import { eventually, recipient, type SdkStack, sleep } from './context.js';

export function reconnectTests(ctx: () => SdkStack): void {
  describe('reconnect and refusals', () => {
    it('reconnects when the edge restarts; listeners survive; each transition is reported once', async () => {
      const { herald, stack } = ctx();
      const h = herald();
      const to = recipient();
      const states: string[] = [];
      h.onConnectionChange((s) => states.push(s));
      const sub = h.subscribe<string>(to);
      const seen: string[] = [];
      sub.listen((p) => seen.push(p));
      await eventually(() => h.connected(), 'connected');
      await stack.restart('socket-edge');
      await eventually(() => h.connected(), 'reconnected', 20_000);
      expect(states).toEqual(['connected', 'disconnected', 'connected']);
      expect((await h.notify({ recipient: to, payload: 'after restart' })).status).toBe(
        DispatchStatus.sent,
      );
      await eventually(() => seen.length === 1, 'the event after the restart');
      expect(seen).toEqual(['after restart']);
      expect(sub.connected()).toBe(true);
    });

    it.each([
      ['an unknown key', 'invalid_api_key', 4401],
      ['a revoked key', 'key_revoked', 4401],
      ['a web client on a mobile key', 'client_mismatch', 4403],
    ])('does not reconnect after a refusal: %s (%s, %i)', async (_name, code, closeCode) => {
      const { herald, runtime, revokedKey, key } = ctx();
      let apiKey = key.key;
      if (code === 'invalid_api_key') apiKey = 'hk_test_thisisnotakeythisisnotakeythisisnot';
      if (code === 'key_revoked') apiKey = (await revokedKey()).key;
      const rt = runtime();
      const h = herald(
        {
          apiKey,
          client: code === 'client_mismatch' ? 'web' : 'mobile',
          backoff: { baseMs: 10, capMs: 50 },
        },
        rt,
      );
      const states: string[] = [];
      h.onConnectionChange((s) => states.push(s));
      const sub = h.subscribe(recipient());
      const errors: HeraldError[] = [];
      sub.onError((e) => errors.push(e));
      await eventually(() => errors.length === 1, 'the refusal');
      expect(errors[0]).toMatchObject({ code, closeCode });
      expect(errors[0]?.message).toMatch(/\w/);
      // Ten times the backoff cap: a retry would have happened by now.
      await sleep(500);
      expect(rt.wire).toHaveLength(1);
      expect(errors).toHaveLength(1);
      // Refused at once, or (a revocation still propagating) accepted, then closed with 4401.
      expect([[], ['connected', 'disconnected']]).toContainEqual(states);
      expect(sub.connected()).toBe(false);
    });

    it('stops when the key of an open socket is revoked (4401 key_revoked)', async () => {
      const { herald, runtime, stack, newKey } = ctx();
      const k = await newKey();
      const rt = runtime();
      const h = herald({ apiKey: k.key, backoff: { baseMs: 10, capMs: 50 } }, rt);
      const states: string[] = [];
      h.onConnectionChange((s) => states.push(s));
      const sub = h.subscribe(recipient());
      const errors: HeraldError[] = [];
      sub.onError((e) => errors.push(e));
      await eventually(() => h.connected(), 'connected');
      await stack.revokeKey(k.id);
      await eventually(() => errors.length === 1, 'the revocation close');
      expect(errors[0]).toMatchObject({ code: 'key_revoked', closeCode: 4401 });
      await sleep(500);
      expect(rt.wire).toHaveLength(1);
      expect(states).toEqual(['connected', 'disconnected']);
    });
  });
}
