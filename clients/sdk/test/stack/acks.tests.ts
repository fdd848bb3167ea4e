import { DispatchStatus } from '@herald/sdk';
import { describe, expect, it } from 'vitest';
import { eventually, recipient, type SdkStack } from './context.js';
import { queueSettled } from './queue-state.js';

export function ackTests(ctx: () => SdkStack): void {
  describe('herald.v1 acks and dedup', () => {
    it('acks each event: the edge settles the queue', async () => {
      const { herald, stack, account } = ctx();
      const h = herald();
      const to = recipient();
      expect((await h.notify({ recipient: to, payload: 1 })).status).toBe(DispatchStatus.queued);
      expect(await queueSettled(stack.nats.connectOptions(), account, to)).toBe(false);
      const seen: unknown[] = [];
      h.subscribe(to).listen((p) => seen.push(p));
      await eventually(() => seen.length === 1, 'the queued event');
      await eventually(
        () => queueSettled(stack.nats.connectOptions(), account, to),
        'the edge to receive the ack',
      );
    });

    it('socket killed before the ack: the event comes again, the listener sees it once, and the next ack settles it', async () => {
      const { herald, runtime, stack, account } = ctx();
      const rt = runtime();
      const h = herald({}, rt);
      const to = recipient();
      const { id } = await h.notify({ recipient: to, payload: { n: 1 } });
      const seen: string[] = [];
      h.subscribe(to).listen((_p, e) => {
        seen.push(e.id);
        // The network dies while the app handles the event: the ack cannot go out.
        if (seen.length === 1) rt.wire.at(-1)?.socket.terminate();
      });
      await eventually(() => rt.wireEventIds().length >= 2, 'the redelivery on a new socket');
      expect(rt.wire.length).toBeGreaterThanOrEqual(2);
      // At least once: the edge may redeliver more than once; every copy is the same event.
      expect(new Set(rt.wireEventIds())).toEqual(new Set([id]));
      expect(seen).toEqual([id]);
      await eventually(
        () => queueSettled(stack.nats.connectOptions(), account, to),
        'the ack of the redelivery',
      );
    });

    it('dedup after a forced reconnect: the edge dies before the ack arrives, the new edge redelivers, the listener sees it once', async () => {
      const { herald, runtime, stack, account } = ctx();
      const rt = runtime();
      const h = herald({}, rt);
      const to = recipient();
      const { id } = await h.notify({ recipient: to, payload: 'once' });
      const states: string[] = [];
      h.onConnectionChange((s) => states.push(s));
      const seen: string[] = [];
      let restarting: Promise<void> | undefined;
      h.subscribe(to).listen((_p, e) => {
        seen.push(e.id);
        // The edge crashes as the event is handled (SIGKILL: no nak, no close frame); the ack is
        // held back until it is dead, as a packet is lost with a crashing host.
        if (seen.length === 1) {
          const socket = rt.wire.at(-1)?.socket;
          if (socket) socket.send = () => undefined;
          restarting = stack.restart('socket-edge', { signal: 'SIGKILL' });
        }
      });
      await eventually(() => restarting !== undefined, 'the first delivery');
      await restarting;
      await eventually(
        () => rt.wireEventIds().length >= 2,
        'the redelivery after ack_wait',
        15_000,
      );
      expect(new Set(rt.wireEventIds())).toEqual(new Set([id]));
      expect(seen).toEqual([id]);
      await eventually(
        () => queueSettled(stack.nats.connectOptions(), account, to),
        'the ack of the redelivery',
      );
      expect(states).toEqual(['connected', 'disconnected', 'connected']);
    });
  });
}
