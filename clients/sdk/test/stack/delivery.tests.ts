import { DispatchStatus, type HeraldEvent } from '@herald/sdk';
import { describe, expect, it } from 'vitest';
import { eventually, QUEUE_MAX_PER_RECIPIENT, recipient, type SdkStack } from './context.js';

export function deliveryTests(ctx: () => SdkStack): void {
  describe('delivery', () => {
    it('online: notify resolves "sent" and the subscription gets the payload as sent, with that id', async () => {
      const h = ctx().herald();
      const to = recipient();
      const seen: Array<[unknown, HeraldEvent]> = [];
      h.subscribe<{ title: string }>(to).listen((payload, event) => seen.push([payload, event]));
      await eventually(() => h.connected(), 'connected');
      const payload = {
        title: 'Order shipped',
        nested: { list: [1, 'two', null], big: 12345678901234 },
        'odd key': true,
      };
      const result = await h.notify({ recipient: to, payload });
      expect(result).toEqual({
        status: DispatchStatus.sent,
        id: expect.any(String),
        httpStatus: 200,
      });
      await eventually(() => seen.length === 1, 'the event');
      expect(seen[0]).toEqual([payload, { id: result.id, ts: expect.any(Number), payload }]);
    });

    it('offline: notify resolves "User offline, notification saved"; subscribing delivers the queue in order, then live events in order', async () => {
      const h = ctx().herald();
      const to = recipient();
      const queuedIds: string[] = [];
      for (let n = 1; n <= QUEUE_MAX_PER_RECIPIENT; n++) {
        const r = await h.notify({ recipient: to, payload: { n } });
        expect(r).toMatchObject({ status: DispatchStatus.queued, httpStatus: 202 });
        queuedIds.push(r.id ?? '');
      }
      const seen: Array<{ n: number; id: string }> = [];
      h.subscribe<{ n: number }>(to).listen((p, e) => seen.push({ n: p.n, id: e.id }));
      await eventually(() => seen.length === QUEUE_MAX_PER_RECIPIENT, 'the queued events');
      expect(seen).toEqual(queuedIds.map((id, i) => ({ n: i + 1, id })));
      for (let n = 6; n <= 10; n++) {
        expect((await h.notify({ recipient: to, payload: { n } })).status).toBe(
          DispatchStatus.sent,
        );
      }
      await eventually(() => seen.length === 10, 'the live events');
      expect(seen.map((s) => s.n)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    });

    it('every device (its own device id) gets the events queued while the user was offline, once', async () => {
      const sender = ctx().herald({ device: false });
      const to = recipient();
      for (let n = 1; n <= 3; n++)
        expect((await sender.notify({ recipient: to, payload: { n } })).status).toBe(
          DispatchStatus.queued,
        );
      const seen = async (device: string) => {
        const h = ctx().herald({ device });
        const got: number[] = [];
        h.subscribe<{ n: number }>(to).listen((p) => got.push(p.n));
        await eventually(() => got.length === 3, `the queued events on ${device}`);
        h.disconnect();
        return got;
      };
      expect(await seen('phone')).toEqual([1, 2, 3]);
      expect(await seen('laptop')).toEqual([1, 2, 3]);
      // The phone again: nothing it proved comes back.
      const phone = ctx().herald({ device: 'phone' });
      const again: number[] = [];
      phone.subscribe<{ n: number }>(to).listen((p) => again.push(p.n));
      await eventually(() => phone.connected(), 'the phone connected');
      // Sent live, or queued if the socket was not yet seen: either way the first event it gets,
      // since anything stale would come before it (in stream order).
      await sender.notify({ recipient: to, payload: { n: 4 } });
      await eventually(() => again.length > 0, 'the new event');
      expect(again).toEqual([4]);
      phone.disconnect();
    });

    it('several subscriptions and several instances coexist; every socket of a recipient gets live events', async () => {
      const { herald } = ctx();
      const a = herald();
      const b = herald();
      const to = recipient();
      const other = recipient();
      const seen: string[] = [];
      a.subscribe(to).listen(() => seen.push('a'));
      b.subscribe(to).listen(() => seen.push('b'));
      a.subscribe(other).listen(() => seen.push('a-other'));
      await eventually(() => a.connected() && b.connected(), 'both instances connected');
      expect((await a.notify({ recipient: to, payload: 'x' })).status).toBe(DispatchStatus.sent);
      await eventually(() => seen.length === 2, 'both sockets');
      expect(seen.sort()).toEqual(['a', 'b']);
    });
  });
}
