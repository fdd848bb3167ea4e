import { randomUUID } from 'node:crypto';
import { freePort, type ServiceProcess, startServiceProcess } from '@herald/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  expectRefusal,
  openClient,
  ROOMY_LIMITS,
  type RunningEdge,
  type Stack,
  startEdge,
  startStack,
  verified,
  waitUntil,
} from './fixture.js';

// The production TTL is 30 s; the test runs the same mechanism with 3 s to stay quick. Every edge
// sharing the bucket gets the same settings, as in production.
const TTL_MS = 3000;
const COUNTS = { CONNECTION_COUNT_TTL_MS: String(TTL_MS), CONNECTION_COUNT_REFRESH_MS: '1000' };

let stack: Stack;
let survivor: RunningEdge;
let doomed: ServiceProcess | undefined;

beforeAll(async () => {
  stack = await startStack();
  // The edge that dies runs as its own process, exactly as main.ts runs it, so kill -9 kills it
  // without a chance to clean up.
  doomed = await startServiceProcess(
    'socket-edge',
    await freePort(),
    {
      ...stack.nats.env('socket-edge'),
      TLS_CERT_FILE: stack.certs.certFile,
      TLS_KEY_FILE: stack.certs.keyFile,
      ...COUNTS,
    },
    stack.certs.ca,
  );
  survivor = await startEdge(stack, COUNTS);
});

afterAll(async () => {
  await doomed?.stop('SIGKILL');
  await survivor?.close();
  await stack?.stop();
});

describe('an edge killed with -9', () => {
  it('stops counting against the cap within the TTL', async () => {
    const account = randomUUID();
    const apiKey = `hk_live_${randomUUID()}`;
    stack.auth.set(
      apiKey,
      verified(`key-${randomUUID()}`, account, 'mobile', null, null, {
        limits: { ...ROOMY_LIMITS, connections: 2 },
      }),
    );
    const port = doomed?.port ?? 0;
    const held = [openClient(stack, port, { apiKey }), openClient(stack, port, { apiKey })];
    await Promise.all(held.map((c) => c.opened));
    await waitUntil(
      'the survivor to count them',
      () => survivor.edge.connectionsSeen(account) === 2,
    );
    expect((await expectRefusal(stack, survivor.port, { apiKey })).status).toBe(429);

    await doomed?.stop('SIGKILL');
    doomed = undefined;
    await Promise.all(held.map((c) => c.closed));
    // Nothing deleted the dead edge's keys: they age out (locally and in the bucket) within the TTL.
    await waitUntil(
      "the dead edge's sockets to stop counting",
      () => survivor.edge.connectionsSeen(account) === 0,
      TTL_MS + 2000,
    );
    const after = openClient(stack, survivor.port, { apiKey });
    await after.opened;
    after.ws.close();
  });
});
