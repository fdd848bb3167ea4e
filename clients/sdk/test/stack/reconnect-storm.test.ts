import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { Herald, type HeraldError, type WebSocketConstructor } from '@herald/sdk';
import { type Stack, startStack } from '@herald/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { eventually } from './context.js';
import { tlsRuntime } from './tls-runtime.js';

const CLIENTS = 1000;
/** The restarted edge's per-address limit: every client here is 127.0.0.1, one address. */
const RATE_PER_S = 200;
const BURST = 100;
/**
 * The SDK's defaults but the cap (60 s by default), lowered so a late client's wait stays short
 * of the test's time: at most 4 s between two attempts of one client, so all 1,000 attempt within
 * 4 s of the edge's return, against room for 100 + 4 × 200 = 900: the limit is certainly met.
 */
const BACKOFF = { baseMs: 1000, capMs: 4000 };
const ACCEPT_DELAY_MS = 1000;
/**
 * All back within three times what the rate allows (1,000 at 200/s: 5 s), plus one longest wait
 * (a client refused just before the last slot), plus the SDK's accept delay: 20 s.
 */
const BOUND_MS = 3 * (CLIENTS / RATE_PER_S) * 1000 + BACKOFF.capMs + ACCEPT_DELAY_MS;
/** No refusal loop: at most three refused connects per client over the whole return. */
const MAX_REFUSALS = 3 * CLIENTS;

/** What every socket of the fleet met, tallied by a `ws` subclass (real sockets, counted). */
interface Tally {
  attempts: number;
  /** Refused in-band: accepted, error frame, close 4429 `too_many_connects` with retry_after. */
  closed4429: number;
  /** Refused at accept (an address already told 429 and still over its rate): reset, no upgrade. */
  droppedAtAccept: number;
  /** The edge was not listening (killed, not yet back): not a refusal. */
  noEdge: number;
  /** Given up by the SDK after connectTimeoutMs (a loaded machine): retried, not a refusal. */
  timedOut: number;
  /** Any other failure before open (reported, to explain a failure of this test). */
  other: Map<string, number>;
  /** The shortest time from a 4429 to that client's next attempt, against the hint it carried. */
  hintGaps: Array<{ gapMs: number; retryAfterS: number }>;
}

function countingRuntime(ca: string, tally: Tally) {
  const rt = tlsRuntime(ca);
  // After a 4429, per recipient: when, and the retry_after its reason carried.
  const refusedAt = new Map<string, { at: number; retryAfterS: number }>();
  class Counted extends WebSocket {
    constructor(url: string, protocols?: string | string[]) {
      super(url, protocols, { ca });
      tally.attempts++;
      const to = new URL(url).searchParams.get('recipient') ?? '';
      const refused = refusedAt.get(to);
      if (refused) {
        tally.hintGaps.push({
          gapMs: performance.now() - refused.at,
          retryAfterS: refused.retryAfterS,
        });
        refusedAt.delete(to);
      }
      let opened = false;
      this.on('open', () => {
        opened = true;
      });
      this.on('close', (code, reason) => {
        if (code !== 4429) return;
        tally.closed4429++;
        const hint = JSON.parse(reason.toString()).retry_after;
        refusedAt.set(to, { at: performance.now(), retryAfterS: hint });
      });
      this.on('error', (err: NodeJS.ErrnoException) => {
        if (opened) return;
        if (err.code === 'ECONNREFUSED') tally.noEdge++;
        else if (/closed before the connection was established/.test(err.message)) tally.timedOut++;
        else if (
          ['ECONNRESET', 'EPIPE'].includes(err.code ?? '') ||
          /socket hang up|disconnected/.test(err.message)
        )
          tally.droppedAtAccept++;
        else tally.other.set(err.message, (tally.other.get(err.message) ?? 0) + 1);
      });
    }
  }
  const WebSocketCtor: WebSocketConstructor = Counted;
  return { ...rt, WebSocket: WebSocketCtor };
}

const newTally = (): Tally => ({
  attempts: 0,
  closed4429: 0,
  droppedAtAccept: 0,
  noEdge: 0,
  timedOut: 0,
  other: new Map(),
  hintGaps: [],
});

// A fleet of SDK clients whose edge died comes back through the restarted edge's per-address
// connect rate without keeping itself refused: retry_after honoured, full jitter, a cap.
describe('1,000 SDK clients reconnecting after an edge kill, under CONNECT_RATE_PER_S', () => {
  let stack: Stack;
  beforeAll(async () => {
    // The first edge admits the fleet at once (the rate off); the restarted one limits it.
    stack = await startStack({ env: { 'socket-edge': { CONNECT_RATE_PER_S: '0' } } });
  });
  afterAll(async () => {
    await stack?.stop();
  });

  it('all come back within the bound computed from the rate, with a bounded number of refusals', async () => {
    const { id: account } = await stack.createAccount();
    const key = await stack.createKey({ account, kind: 'test', client: 'mobile' });
    const tally = newTally();
    const rt = countingRuntime(stack.ca, tally);
    const errors: HeraldError[] = [];
    const fleet = Array.from({ length: CLIENTS }, () => {
      const h = new Herald({
        apiKey: key.key,
        client: 'mobile',
        baseUrl: stack.baseUrl,
        wsUrl: stack.wsUrl,
        WebSocket: rt.WebSocket,
        fetch: rt.fetch,
        backoff: BACKOFF,
        acceptDelayMs: ACCEPT_DELAY_MS,
        device: false,
      });
      h.onError((e) => errors.push(e));
      h.subscribe(randomUUID());
      return h;
    });
    const allBack = () => fleet.every((h) => h.connected());
    try {
      await eventually(allBack, 'the fleet connected to the first edge', 60_000);
      // Only the return counts: a fresh tally from the kill on.
      Object.assign(tally, newTally());
      errors.length = 0;
      const killedAt = performance.now();
      await stack.stopService('socket-edge', 'SIGKILL');
      await eventually(() => fleet.every((h) => !h.connected()), 'every client saw the edge die');
      await stack.startService('socket-edge', {
        CONNECT_RATE_PER_S: String(RATE_PER_S),
        CONNECT_BURST: String(BURST),
      });
      const readyAt = performance.now();
      await eventually(allBack, `all ${CLIENTS} back within ${BOUND_MS} ms`, BOUND_MS);
      const backAt = performance.now();
      const refusals = tally.closed4429 + tally.droppedAtAccept;
      const metrics = await fetch(`http://127.0.0.1:${stack.opsPorts['socket-edge']}/metrics`).then(
        (r) => r.text(),
      );
      const line = metrics
        .split('\n')
        .find((l) => l.startsWith('herald_socket_rejections_total{code="too_many_connects"'));
      const shortestHint = Math.min(...tally.hintGaps.map((g) => g.gapMs - g.retryAfterS * 1000));
      console.log(
        JSON.stringify({
          clients: CLIENTS,
          rate: RATE_PER_S,
          burst: BURST,
          boundMs: BOUND_MS,
          backAfterReadyMs: Math.round(backAt - readyAt),
          backAfterKillMs: Math.round(backAt - killedAt),
          attempts: tally.attempts,
          closed4429: tally.closed4429,
          droppedAtAccept: tally.droppedAtAccept,
          noEdge: tally.noEdge,
          timedOut: tally.timedOut,
          other: Object.fromEntries(tally.other),
          refusals,
          edgeRejectionsTooManyConnects: line?.split(' ')[1],
          shortestMarginOverHintMs: Math.round(shortestHint),
        }),
      );
      // The limit was met (the fleet arrives faster than it admits), and did not loop.
      expect(refusals).toBeGreaterThan(0);
      expect(refusals).toBeLessThanOrEqual(MAX_REFUSALS);
      expect([...tally.other.keys()]).toEqual([]);
      // Every 4429 carried its hint, the SDK read it, and no client came back before it passed.
      const hinted = errors.filter((e) => e.code === 'too_many_connects');
      expect(hinted).toHaveLength(tally.closed4429);
      expect(hinted.every((e) => e.closeCode === 4429 && (e.retryAfter ?? 0) >= 1)).toBe(true);
      // Node's timers may fire up to a millisecond early by performance.now(): 5 ms of slack.
      expect(tally.hintGaps.every((g) => g.gapMs >= g.retryAfterS * 1000 - 5)).toBe(true);
    } finally {
      for (const h of fleet) h.disconnect();
      await rt.close();
    }
  }, 180_000);
});
