import { randomUUID } from 'node:crypto';
import { Herald, type HeraldOptions } from '@herald/sdk';
import { expect, vi } from 'vitest';
import { type FakeSocket, fakeWebSocket } from './fake-websocket.js';

export const KEY = 'hk_test_unit-test-secret-key-0123456789';

export const uuid = (): string => randomUUID();

/** Lets pending promises and zero-delay timers run (the accept turn after `open`). */
export const settle = () => vi.advanceTimersByTimeAsync(0);

/** A Herald on fake sockets, with quick, readable backoff numbers. */
export function setup(extra: Partial<HeraldOptions> = {}) {
  const fake = fakeWebSocket();
  const herald = new Herald({
    apiKey: KEY,
    client: 'web',
    wsUrl: 'wss://edge.test',
    baseUrl: 'https://api.test',
    WebSocket: fake.WebSocket,
    backoff: { baseMs: 100, capMs: 800, stableMs: 5000 },
    // Accept one turn after open, so `settle()` accepts; the default delay has its own tests.
    acceptDelayMs: 0,
    // The probe after a socket that never opened: no answer (a network failure) unless a test says.
    fetch: () => Promise.reject(new TypeError('fetch failed')),
    ...extra,
  });
  return { herald, ...fake };
}

/** Opens the socket and lets the accept turn pass: the subscription is connected. */
export async function accept(sock: FakeSocket): Promise<void> {
  sock.open();
  await settle();
}

/** Asserts the next socket appears exactly `delay` ms after now (fake timers), not a ms before. */
export async function expectRetryAfter(sockets: unknown[], delay: number): Promise<void> {
  const before = sockets.length;
  if (delay > 0) await vi.advanceTimersByTimeAsync(delay - 1);
  expect(sockets.length, `no retry before ${delay} ms`).toBe(before);
  await vi.advanceTimersByTimeAsync(1);
  expect(sockets.length, `a retry at ${delay} ms`).toBe(before + 1);
}
