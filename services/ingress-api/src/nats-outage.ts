import type { NatsLink } from '@herald/kit';
import { HeraldError } from '@herald/proto';

/**
 * Refuses at once while the NATS connection has been down past its grace: every step after this
 * one (key check, live push, queue publish) goes through NATS, and would only wait out its timeout.
 * After the request's own checks, so a bad request still learns what to fix.
 */
export function refuseWhileDown(
  link: NatsLink | undefined,
  consequence = 'nothing was sent or stored',
): void {
  if (!link?.down) return;
  throw new HeraldError(
    'unavailable',
    `Herald cannot reach NATS, its message broker, at the moment: ${consequence}; retry shortly`,
    { retryAfter: 1 },
  );
}
