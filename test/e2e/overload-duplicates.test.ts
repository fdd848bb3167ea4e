import { post, type TestSocket } from '@herald/testkit';
import { afterAll, describe, expect, it } from 'vitest';
import {
  connect,
  eventually,
  newTenant,
  recipient,
  sleep,
  type Tenant,
  useStack,
} from './fixtures.js';

/** The readers answer every proof ping this much later: under load, a proof waits its turn. */
const PONG_DELAY_MS = 600;
/** Short on purpose: under the old rule the batch's proof budget was what was left of it, halved. */
const LIVE_TIMEOUT_MS = 200;
const READERS = 4;
const EVENTS_EACH = 5;

/**
 * Issue 31, "No duplicates from overload": events to connected plain-framing readers whose proof
 * of receipt is slow (as every proof is when the server is saturated). The edge writes the events
 * at once; the pongs that prove them come PONG_DELAY_MS later. Before LIVE_PROOF_WAIT_MS, a batch
 * gave the edge half of what was left of LIVE_TIMEOUT_MS to prove them, and a single dispatch gave
 * it LIVE_TIMEOUT_MS in all; past it ingress queued the events and answered 202, and the drain
 * wrote them again: every reader got every event twice. The first case is that setting (a proof
 * budget below the readers' round trip); the second is the default, for a batch and for single
 * dispatches (`POST /notify`) sent all at once.
 */
describe('events to readers whose proof is slow', () => {
  describe('with LIVE_PROOF_WAIT_MS below their round trip (the old behaviour)', () => {
    const stack = useStack({
      services: ['auth', 'ingress-api', 'socket-edge'],
      env: {
        'ingress-api': {
          LIVE_TIMEOUT_MS: String(LIVE_TIMEOUT_MS),
          LIVE_PROOF_WAIT_MS: String(LIVE_TIMEOUT_MS),
        },
      },
    });

    for (const mode of MODES) {
      it(`${mode}: queues what was written and unproven (202), and the readers get it twice`, async () => {
        const run = await sendToReaders(stack, mode);
        expect(run.statuses).toEqual(Array(READERS * EVENTS_EACH).fill(202));
        // The written copy, then the queued one: every event reaches its reader twice.
        await eventually(
          () => run.count().duplicates === READERS * EVENTS_EACH,
          'every event delivered twice',
        );
        expect(run.count()).toEqual({ missing: 0, duplicates: READERS * EVENTS_EACH });
      });
    }
  });

  describe('with the default LIVE_PROOF_WAIT_MS', () => {
    const stack = useStack({
      services: ['auth', 'ingress-api', 'socket-edge'],
      env: { 'ingress-api': { LIVE_TIMEOUT_MS: String(LIVE_TIMEOUT_MS) } },
    });

    for (const mode of MODES) {
      it(`${mode}: answers 200 once the readers prove receipt, and delivers each event once`, async () => {
        const run = await sendToReaders(stack, mode);
        expect(run.statuses).toEqual(Array(READERS * EVENTS_EACH).fill(200));
        // Nothing was queued (every event is 200), so nothing can come again; wait as long as a
        // queued copy took to arrive in the case above, and look.
        await sleep(PONG_DELAY_MS * 4);
        expect(run.count()).toEqual({ missing: 0, duplicates: 0 });
      });
    }
  });
});

/** One batch of every event, or one `POST /notify` per event, all sent at once. */
const MODES = ['batch', 'single'] as const;
type Mode = (typeof MODES)[number];

interface Run {
  /** Each event's HTTP status in the batch's answer, in order. */
  statuses: number[];
  /** So far: events no reader received, and receipts beyond the first of an event. */
  count: () => { missing: number; duplicates: number };
}

const sockets: TestSocket[] = [];
afterAll(async () => {
  await Promise.all(sockets.map((s) => s.close()));
});

/**
 * Connects READERS plain-framing readers with slow pongs and sends EVENTS_EACH events to each, in
 * one batch or as single dispatches; receipts are counted by the payload's own number.
 */
async function sendToReaders(
  stack: () => import('@herald/testkit').Stack,
  mode: Mode,
): Promise<Run> {
  const tenant: Tenant = await newTenant(stack());
  const readers = Array.from({ length: READERS }, () => recipient());
  const open = await Promise.all(
    readers.map((r) =>
      connect(stack(), { apiKey: tenant.key.key, recipient: r, pongDelayMs: PONG_DELAY_MS }),
    ),
  );
  sockets.push(...open);
  const events = readers.flatMap((r, reader) =>
    Array.from({ length: EVENTS_EACH }, (_, k) => ({
      recipient: r,
      payload: { n: reader * EVENTS_EACH + k },
    })),
  );
  const statuses =
    mode === 'batch'
      ? await sendBatch(stack(), tenant, events)
      : await Promise.all(
          events.map(async (event) => {
            const res = await post(stack().baseUrl, stack().ca, {
              ...event,
              api_key: tenant.key.key,
              client: 'mobile',
            });
            return res.status;
          }),
        );
  const count = () => {
    const received = new Map<number, number>();
    for (const socket of open) {
      for (const frame of socket.frames) {
        const { n } = JSON.parse(frame.text) as { n: number };
        received.set(n, (received.get(n) ?? 0) + 1);
      }
    }
    const missing = events.filter((e) => !received.has(e.payload.n)).length;
    const duplicates = [...received.values()].reduce((sum, c) => sum + c - 1, 0);
    return { missing, duplicates };
  };
  return { statuses, count };
}

/** Each event's HTTP status in one batch's answer, in order. */
async function sendBatch(
  stack: import('@herald/testkit').Stack,
  tenant: Tenant,
  events: readonly { recipient: string; payload: { n: number } }[],
): Promise<number[]> {
  const res = await post(
    stack.baseUrl,
    stack.ca,
    { api_key: tenant.key.key, client: 'mobile', events },
    { path: '/notify/batch' },
  );
  expect(res.status).toBe(200);
  return (res.body as { results: { http_status: number }[] }).results.map((r) => r.http_status);
}
