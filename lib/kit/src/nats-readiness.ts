import type { NatsConnection } from 'nats';
import { natsReady } from './nats.js';

/** How long a readiness probe waits for the NATS server's PONG, ms. */
export const NATS_PROBE_TIMEOUT_MS = 1000;

/**
 * True when the NATS server answers a round trip within `timeoutMs`: the `nats` check of every
 * service's /readyz. The connection's state alone is not enough: a client that is reconnecting is
 * neither closed nor draining, and would be reported ready while every request fails. nats.js
 * holds a PING sent meanwhile (and drops it at the next reconnect attempt), so the probe fails on
 * its timeout; probes cannot pile up, as each reconnect attempt rejects the PINGs it held.
 */
export async function natsAnswers(
  nc: NatsConnection,
  timeoutMs = NATS_PROBE_TIMEOUT_MS,
): Promise<boolean> {
  if (!natsReady(nc)) return false;
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), timeoutMs);
  });
  const answered = nc.flush().then(
    () => true,
    () => false,
  );
  try {
    return await Promise.race([answered, timedOut]);
  } finally {
    clearTimeout(timer);
  }
}
