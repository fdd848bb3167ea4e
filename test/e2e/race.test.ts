import { openSocket } from '@herald/testkit';
import { describe, expect, it } from 'vitest';
import { eventually, newTenant, notify, recipient, sleep, useStack } from './fixtures.js';

// DESIGN.md section 3: an event can be stored between ingress's "no responders" and the edge's
// subscribe, and the recipient's consumer exists only once something is queued. The edge must
// still deliver such events, and exactly once.
describe('the connect race', () => {
  const stack = useStack();

  it('delivers every event dispatched while the recipient is connecting exactly once', async () => {
    const s = stack();
    const tenant = await newTenant(s);
    const ITERATIONS = 25;
    const outcomes = { 200: 0, 202: 0 } as Record<number, number>;
    for (let i = 0; i < ITERATIONS; i++) {
      const to = recipient();
      const sock = openSocket(s.wsUrl, s.ca, { apiKey: tenant.key.key, recipient: to, v1: true });
      // Dispatches spread across the connect: some land before the subscription, some during
      // the queue check, some after.
      const results = await Promise.all(
        [0, 1, 3, 6, 10, 20].map(async (delay, n) => {
          await sleep(delay);
          const res = await notify(s, tenant, to, { iteration: i, n });
          expect([200, 202]).toContain(res.status);
          outcomes[res.status] = (outcomes[res.status] ?? 0) + 1;
          return res.body.id as string;
        }),
      );
      await sock.opened;
      await eventually(
        () => sock.events().length >= results.length,
        `iteration ${i}: all ${results.length} events`,
        10_000,
      );
      // Leave time for a duplicate to show up, then check each id arrived exactly once.
      await sleep(150);
      const got = sock.events().map((e) => e.id);
      expect(got.slice().sort()).toEqual(results.slice().sort());
      await sock.close();
    }
    // Both paths were exercised, or the test did not test the race.
    expect(outcomes[200]).toBeGreaterThan(0);
    expect(outcomes[202]).toBeGreaterThan(0);
  });
});
