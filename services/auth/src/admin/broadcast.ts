import type { AuthInvalidate } from '@herald/proto';
import { publishInvalidation } from '../invalidation.js';
import type { AdminContext } from './context.js';

/** How long a command waits for NATS to take an invalidation broadcast. */
const BROADCAST_TIMEOUT_MS = 5000;

/**
 * Publishes the invalidations; resolves with why it failed, or undefined. The database change
 * already stands either way: the command reports a failure as a warning with exit status 1.
 */
export async function broadcast(
  ctx: AdminContext,
  messages: AuthInvalidate[],
): Promise<string | undefined> {
  if (messages.length === 0) return undefined;
  try {
    const nc = await ctx.nats();
    await withTimeout(
      Promise.all(messages.map((m) => publishInvalidation(nc, m))),
      BROADCAST_TIMEOUT_MS,
    );
    return undefined;
  } catch (err) {
    return err instanceof Error ? err.message : String(err);
  }
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer from NATS within ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
