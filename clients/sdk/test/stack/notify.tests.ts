import { DispatchStatus, HeraldError } from '@herald/sdk';
import { describe, expect, it } from 'vitest';
import { eventually, QUEUE_MAX_PER_RECIPIENT, recipient, type SdkStack } from './context.js';

/** The ingress default PAYLOAD_LIMIT_BYTES. */
const PAYLOAD_LIMIT = 65_536;

export function notifyTests(ctx: () => SdkStack): void {
  describe('notifyMany against the real ingress', () => {
    it('one result per event, in order: live sent, offline queued, the one over the queue cap 507 alone', async () => {
      const h = ctx().herald();
      const live = recipient();
      const offline = recipient();
      const seen: Array<[unknown, string]> = [];
      h.subscribe(live).listen((payload, event) => seen.push([payload, event.id]));
      await eventually(() => h.connected(), 'connected');
      const results = await h.notifyMany([
        { recipient: live, payload: { n: 0 } },
        ...Array.from({ length: QUEUE_MAX_PER_RECIPIENT + 1 }, (_, n) => ({
          recipient: offline,
          payload: { n },
        })),
      ]);
      expect(results.map((r) => [r.status, r.httpStatus])).toEqual([
        [DispatchStatus.sent, 200],
        ...Array(QUEUE_MAX_PER_RECIPIENT).fill([DispatchStatus.queued, 202]),
        [DispatchStatus.failed, 507],
      ]);
      expect(results.at(-1)?.error).toMatchObject({ code: 'queue_full', field: 'recipient' });
      expect(new Set(results.slice(0, -1).map((r) => r.id)).size).toBe(QUEUE_MAX_PER_RECIPIENT + 1);
      await eventually(() => seen.length === 1, 'the live event');
      expect(seen[0]).toEqual([{ n: 0 }, results[0]?.id]);
    });

    it('a refused request fails every event with its error', async () => {
      const results = await ctx()
        .herald({ apiKey: 'hk_test_thisisnotakeythisisnotakeythisisnot' })
        .notifyMany([
          { recipient: recipient(), payload: 1 },
          { recipient: recipient(), payload: 2 },
        ]);
      expect(results).toHaveLength(2);
      for (const r of results) {
        expect(r).toMatchObject({
          status: DispatchStatus.failed,
          httpStatus: 401,
          error: { code: 'invalid_api_key' },
        });
      }
    });
  });

  describe('notify outcomes from the real ingress', () => {
    it('an unknown key resolves failed with 401 invalid_api_key', async () => {
      const r = await ctx()
        .herald({ apiKey: 'hk_test_thisisnotakeythisisnotakeythisisnot' })
        .notify({ recipient: recipient(), payload: 1 });
      expect(r).toMatchObject({
        status: DispatchStatus.failed,
        httpStatus: 401,
        error: { code: 'invalid_api_key' },
      });
      expect(r.error).toBeInstanceOf(HeraldError);
      expect(r.error?.message).toMatch(/\w/);
    });

    it('a revoked key resolves failed with 401 key_revoked', async () => {
      const { revokedKey, herald } = ctx();
      const key = await revokedKey();
      const r = await herald({ apiKey: key.key }).notify({ recipient: recipient(), payload: 1 });
      expect(r).toMatchObject({
        status: DispatchStatus.failed,
        httpStatus: 401,
        error: { code: 'key_revoked' },
      });
      // A Test key cannot be re-created (one per account): the fix named is a reset.
      expect(r.error?.message).toContain('key reset-test');
      expect(r.error?.message).not.toContain('key create');
    });

    it('a client the key was not issued for resolves failed with 403 client_mismatch naming the field', async () => {
      const r = await ctx().herald().notify({ recipient: recipient(), payload: 1, client: 'web' });
      expect(r).toMatchObject({
        status: DispatchStatus.failed,
        httpStatus: 403,
        error: { code: 'client_mismatch', field: 'client' },
      });
    });

    it('a web key: its registered Origin is queued, another Origin is 403 origin_mismatch', async () => {
      const { newKey, herald } = ctx();
      const web = await newKey({ client: 'web', domain: 'https://app.example.com' });
      const h = herald({ apiKey: web.key, client: 'web' });
      const ok = await h.notify({
        recipient: recipient(),
        payload: 1,
        origin: 'https://app.example.com',
      });
      expect(ok).toMatchObject({ status: DispatchStatus.queued, httpStatus: 202 });
      const bad = await h.notify({
        recipient: recipient(),
        payload: 1,
        origin: 'https://evil.example.com',
      });
      expect(bad).toMatchObject({
        httpStatus: 403,
        error: { code: 'origin_mismatch', field: 'Origin' },
      });
    });

    it('a payload at the limit is accepted; one byte over resolves failed with 413 payload_too_large', async () => {
      const h = ctx().herald();
      // JSON.stringify adds the two quotes of a string payload.
      const at = await h.notify({ recipient: recipient(), payload: 'x'.repeat(PAYLOAD_LIMIT - 2) });
      expect(at.status).toBe(DispatchStatus.queued);
      const over = await h.notify({
        recipient: recipient(),
        payload: 'x'.repeat(PAYLOAD_LIMIT - 1),
      });
      expect(over).toMatchObject({
        status: DispatchStatus.failed,
        httpStatus: 413,
        error: { code: 'payload_too_large', field: 'payload' },
      });
    });

    it('a full offline queue resolves failed with 507 queue_full', async () => {
      const h = ctx().herald();
      const to = recipient();
      for (let n = 0; n < QUEUE_MAX_PER_RECIPIENT; n++) {
        expect((await h.notify({ recipient: to, payload: n })).status).toBe(DispatchStatus.queued);
      }
      const full = await h.notify({ recipient: to, payload: 'one too many' });
      expect(full).toMatchObject({
        status: DispatchStatus.failed,
        httpStatus: 507,
        error: { code: 'queue_full' },
      });
    });

    it('an Idempotency-Key makes a retried notify deliver once, with the same id', async () => {
      const h = ctx().herald();
      const to = recipient();
      const key = `order-${recipient()}`;
      const first = await h.notify({ recipient: to, payload: { order: 42 }, idempotencyKey: key });
      const retry = await h.notify({ recipient: to, payload: { order: 42 }, idempotencyKey: key });
      const after = await h.notify({ recipient: to, payload: 'after' });
      expect(first.status).toBe(DispatchStatus.queued);
      expect(retry).toEqual(first);
      // The queue keeps order: a second copy would come between the first and `after`.
      const seen: string[] = [];
      h.subscribe(to).listen((_p, e) => seen.push(e.id));
      await eventually(() => seen.length === 2, 'the queued events');
      expect(seen).toEqual([first.id, after.id]);
    });

    it('an unreachable ingress resolves failed with network_error and httpStatus 0', async () => {
      const { stack, herald } = ctx();
      const closedPort = new URL(stack.baseUrl);
      closedPort.port = String(stack.ports.retention);
      const r = await herald({ baseUrl: closedPort.origin, wsUrl: stack.wsUrl }).notify({
        recipient: recipient(),
        payload: 1,
      });
      expect(r).toMatchObject({
        status: DispatchStatus.failed,
        httpStatus: 0,
        error: { code: 'network_error' },
      });
      expect(JSON.stringify(r.error?.message)).not.toContain(ctx().key.key);
    });
  });
}
