import { performance } from 'node:perf_hooks';

/** Every load loop here is bounded twice: by a count and by a time. */
export interface Bounds {
  /** Stop issuing once this many were issued. */
  maxCount: number;
  /** Stop issuing after this long, ms. */
  durationMs: number;
}

export interface LoopResult {
  /** Operations issued. */
  issued: number;
  /** Operations that resolved. */
  completed: number;
  /** Operations that threw. */
  failed: number;
  /** From the first issue to the last completion, ms. */
  elapsedMs: number;
  /** The first failure's message, for the report. */
  firstError?: string;
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/**
 * Closed loop: `concurrency` workers each issue an operation, await it and issue the next, until a
 * bound is hit. Measures the most a server sustains with that many requests in flight.
 */
export async function closedLoop(
  concurrency: number,
  bounds: Bounds,
  op: (i: number) => Promise<void>,
): Promise<LoopResult> {
  const start = performance.now();
  const end = start + bounds.durationMs;
  let issued = 0;
  let completed = 0;
  let failed = 0;
  let firstError: string | undefined;
  const worker = async () => {
    while (issued < bounds.maxCount && performance.now() < end) {
      const i = issued++;
      try {
        await op(i);
        completed++;
      } catch (err) {
        failed++;
        firstError ??= err instanceof Error ? err.message : String(err);
      }
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, concurrency) }, worker));
  return {
    issued,
    completed,
    failed,
    elapsedMs: performance.now() - start,
    ...(firstError === undefined ? {} : { firstError }),
  };
}

/**
 * Open loop at a fixed rate: operation i is due at start + i/rate, whatever happened to the ones
 * before it (the generator never waits for an answer before sending the next). `op` receives the
 * time it was actually issued, and latency is measured from there: the generator wakes on a 1 ms
 * timer, so the due time would charge up to a millisecond of its own timer lag to the server.
 * `behindMs` reports the worst lag, to show the generator kept up.
 */
export async function openLoop(
  ratePerSec: number,
  bounds: Bounds,
  op: (i: number, issuedAt: number) => Promise<void>,
  drainMs = 5000,
): Promise<LoopResult & { behindMs: number }> {
  if (!(ratePerSec > 0)) throw new RangeError(`rate must be positive, got ${ratePerSec}`);
  const interval = 1000 / ratePerSec;
  const start = performance.now();
  const count = Math.min(bounds.maxCount, Math.floor((bounds.durationMs / 1000) * ratePerSec));
  let issued = 0;
  let completed = 0;
  let failed = 0;
  let behindMs = 0;
  let firstError: string | undefined;
  let lastDone = start;
  const pending = new Set<Promise<void>>();
  while (issued < count) {
    const now = performance.now();
    const due = Math.min(count, Math.floor((now - start) / interval) + 1);
    while (issued < due) {
      behindMs = Math.max(behindMs, now - (start + issued * interval));
      const p = op(issued, performance.now()).then(
        () => {
          completed++;
        },
        (err: unknown) => {
          failed++;
          firstError ??= err instanceof Error ? err.message : String(err);
        },
      );
      const tracked = p.finally(() => {
        lastDone = performance.now();
        pending.delete(tracked);
      });
      pending.add(tracked);
      issued++;
    }
    if (issued < count) await sleep(Math.max(0, Math.min(1, start + issued * interval - now)));
  }
  await Promise.race([Promise.all(pending), sleep(drainMs)]);
  return {
    issued,
    completed,
    failed,
    elapsedMs: lastDone - start,
    behindMs,
    ...(firstError === undefined ? {} : { firstError }),
  };
}

/** Resolves when check() holds or the deadline passes; returns whether it held. */
export async function waitUntil(
  check: () => boolean,
  timeoutMs: number,
  pollMs = 2,
): Promise<boolean> {
  const deadline = performance.now() + timeoutMs;
  while (!check()) {
    if (performance.now() > deadline) return false;
    await sleep(pollMs);
  }
  return true;
}
