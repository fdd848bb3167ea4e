import { DispatchStatus } from '@herald/sdk';
import { describe, expect, it } from 'vitest';
import { recipient, type SdkStack } from './context.js';

export function unavailableTests(ctx: () => SdkStack): void {
  describe('when NATS is down (runs last: it leaves NATS stopped)', () => {
    it('notify resolves "Failed to send/save notification" with 503 and the server code', async () => {
      const { stack, herald } = ctx();
      await stack.nats.stop({ keepStore: true });
      const r = await herald({ notifyTimeoutMs: 20_000 }).notify({
        recipient: recipient(),
        payload: 1,
      });
      expect(r).toMatchObject({
        status: DispatchStatus.failed,
        httpStatus: 503,
        error: { code: 'unavailable', httpStatus: 503 },
      });
      expect(r.id).toBeUndefined();
    });
  });
}
