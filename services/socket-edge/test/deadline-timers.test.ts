import { randomUUID } from 'node:crypto';
import { getHeapSnapshot } from 'node:v8';
import { describe, expect, it } from 'vitest';
import { socketDeadlines } from '../src/socket/deadlines.js';
import { type EdgeStack, openClient, useEdgeStack, verified, waitUntil } from './fixture.js';

let s: EdgeStack;
// Connects come faster than an address's default rate here: the limiter is not what is tested.
useEdgeStack((started) => (s = started), { CONNECT_RATE_PER_S: '0' });

/** Sockets opened and closed, in rounds of ROUND at once. */
const SOCKETS = 200;
const ROUND = 20;

/**
 * Node's timer lists reachable now (a heap snapshot holds only what survives a full GC): one per
 * distinct timeout duration, and an unref'd timer's list is not removed when the timer is cleared.
 */
async function timerLists(): Promise<number> {
  const chunks: string[] = [];
  for await (const chunk of getHeapSnapshot()) chunks.push(String(chunk));
  const snap = JSON.parse(chunks.join('')) as {
    snapshot: { meta: { node_fields: string[]; node_types: [string[]] } };
    nodes: number[];
    strings: string[];
  };
  const { node_fields: fields, node_types: types } = snap.snapshot.meta;
  const [typeAt, nameAt] = [fields.indexOf('type'), fields.indexOf('name')];
  const object = types[0].indexOf('object');
  let n = 0;
  for (let i = 0; i < snap.nodes.length; i += fields.length) {
    if (
      snap.nodes[i + typeAt] === object &&
      snap.strings[snap.nodes[i + nameAt] ?? -1] === 'TimersList'
    )
      n++;
  }
  return n;
}

describe("a socket's key deadline leaves nothing behind once the socket closed (issue 43)", () => {
  it(`${SOCKETS} sockets of a Test key opened and closed: no deadline and no timer list left per socket`, async () => {
    const { stack, edge } = s;
    // A Test key's 4 hours: every socket's deadline is hours away, and a different number of ms.
    const key = verified(`key-${randomUUID()}`, randomUUID(), 'mobile', null, null, {
      kind: 'test',
      expires_at: Date.now() + 4 * 3600_000,
    });
    const apiKey = `hk_test_${randomUUID()}`;
    stack.auth.set(apiKey, key);
    const deadlinesBefore = socketDeadlines.size;
    const listsBefore = await timerLists();
    for (let done = 0; done < SOCKETS; done += ROUND) {
      const clients = Array.from({ length: ROUND }, () =>
        openClient(stack, edge.port, { apiKey, v1: done % 40 === 0 }),
      );
      await Promise.all(clients.map((c) => c.opened));
      // Each open socket holds its key's deadline.
      expect(socketDeadlines.size).toBeGreaterThanOrEqual(deadlinesBefore + ROUND);
      // Half close cleanly, half are cut off (no close frame), as the soak's churn does.
      for (const [i, c] of clients.entries()) {
        if (i % 2 === 0) c.ws.close(1000);
        else c.ws.terminate();
      }
      await Promise.all(clients.map((c) => c.closed));
    }
    await waitUntil(
      'every socket deadline cancelled',
      () => socketDeadlines.size === deadlinesBefore,
    );
    // Before the fix each socket's unref'd expiry timer (a duration of its own, to the ms) left a
    // timer list until its key's deadline: about one per socket here (SOCKETS more).
    expect(await timerLists()).toBeLessThan(listsBefore + SOCKETS / 10);
  }, 120_000);
});
