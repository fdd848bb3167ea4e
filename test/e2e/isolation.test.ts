import { describe, expect, it } from 'vitest';
import { connect, newTenant, notify, recipient, useStack } from './fixtures.js';

describe('tenant isolation', () => {
  const stack = useStack();

  it("a key of account B cannot reach a socket opened with account A's key for the same recipient UUID", async () => {
    const s = stack();
    const a = await newTenant(s);
    const b = await newTenant(s);
    const shared = recipient();
    const sockA = await connect(s, { apiKey: a.key.key, recipient: shared, v1: true });

    // B's dispatch sees no socket in B's namespace: it is queued for B's recipient, not pushed to A.
    const fromB = await notify(s, b, shared, { from: 'B' });
    expect(fromB.status).toBe(202);
    const fromA = await notify(s, a, shared, { from: 'A' });
    expect(fromA.status).toBe(200);
    const [first] = await sockA.waitForFrames(1);
    expect(first?.envelope?.payload).toEqual({ from: 'A' });
    expect(sockA.events().map((e) => e.payload)).not.toContainEqual({ from: 'B' });

    // B's own socket for that UUID gets B's queued event, and A's socket still never does.
    const sockB = await connect(s, { apiKey: b.key.key, recipient: shared, v1: true });
    const [fb] = await sockB.waitForFrames(1);
    expect(fb?.envelope).toMatchObject({ id: fromB.body.id, payload: { from: 'B' } });
    const liveA = await notify(s, a, shared, { from: 'A', n: 2 });
    expect(liveA.status).toBe(200);
    await sockA.waitForFrames(2);
    expect(sockA.events().map((e) => e.payload)).toEqual([{ from: 'A' }, { from: 'A', n: 2 }]);
    expect(sockB.events().map((e) => e.payload)).toEqual([{ from: 'B' }]);
    await Promise.all([sockA.close(), sockB.close()]);
  });
});
