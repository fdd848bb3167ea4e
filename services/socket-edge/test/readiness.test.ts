import { describe, expect, it } from 'vitest';
import {
  expectRefusal,
  fetchText,
  openClient,
  type RunningEdge,
  type Stack,
  startEdge,
  useEdgeStack,
  waitUntil,
} from './fixture.js';

// Issue 10: /readyz said ready while NATS was down, and every connect got 503 meanwhile.

let stack: Stack;
let edge: RunningEdge;

useEdgeStack((started) => {
  ({ stack, edge } = started);
});

// The named checks are on the loopback ops listener; the public port answers the status alone.
const readiness = async () => {
  const res = await fetch(`http://127.0.0.1:${edge.opsPort}/readyz`);
  return { status: res.status, body: (await res.json()) as unknown };
};
const publicReadiness = async () => {
  const res = await fetchText(stack, edge.port, '/readyz');
  return { status: res.status, body: JSON.parse(res.body) as unknown };
};

describe('/readyz', () => {
  it('says not ready while NATS is down, and ready again once it is back', async () => {
    expect(await readiness()).toEqual({
      status: 200,
      body: { status: 'ready', checks: { nats: true } },
    });

    await stack.nats.stop({ keepStore: true });
    await waitUntil('not ready', async () => (await readiness()).status === 503, 20_000);
    expect(await readiness()).toEqual({
      status: 503,
      body: { status: 'not_ready', checks: { nats: false } },
    });
    expect(await publicReadiness()).toEqual({ status: 503, body: { status: 'not_ready' } });
    // What readiness protects a load balancer from: every connect is refused meanwhile.
    expect((await expectRefusal(stack, edge.port)).status).toBe(503);

    await stack.nats.restart();
    await waitUntil('ready again', async () => (await readiness()).status === 200, 20_000);
    // The test's auth responder reconnects on its own schedule: connects succeed once it is back.
    await waitUntil(
      'a connect to succeed',
      async () => {
        const client = openClient(stack, edge.port);
        const opened = await client.opened.then(
          () => true,
          () => false,
        );
        client.ws.close();
        return opened;
      },
      20_000,
    );
  }, 60_000);
});

describe('start', () => {
  it('refuses to start with another QUEUE_PARTITIONS than the queue streams were created with', async () => {
    // The stack's streams are the default 16 partitions; an edge with 8 would look for half of
    // the recipients' queues in the wrong stream and never deliver them.
    await expect(startEdge(stack, { QUEUE_PARTITIONS: '8' })).rejects.toThrow(/QUEUE_PARTITIONS=8/);
  });
});
