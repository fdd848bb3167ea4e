import type { z } from 'zod';

/** The variables the checks read (config.ts's Env has them; named here, so no cycle). */
interface Env {
  PAYLOAD_LIMIT_BYTES: number;
  QUEUE_MAX_MSG_BYTES?: number | undefined;
  IDEMPOTENCY_TTL_MS: number;
  LIVE_TIMEOUT_MS: number;
  LIVE_PROOF_WAIT_MS: number;
  PUBLISH_TIMEOUT_MS: number;
  FANOUT_ACK_WAIT_MS: number;
}

/**
 * Room a queued message needs beyond its payload for the headers ingress sets (event id, ts,
 * Nats-Msg-Id with a 255-character Idempotency-Key, expected stream): JetStream counts headers
 * against `max_msg_size` (measured on 2.9.10), so the stream must allow payload + headers.
 */
export const HEADER_HEADROOM_BYTES = 1024;

/** The checks across variables: each names the variable at fault and the fix. */
export function crossChecks(env: Env, ctx: z.RefinementCtx): void {
  const needed = env.PAYLOAD_LIMIT_BYTES + HEADER_HEADROOM_BYTES;
  if (env.QUEUE_MAX_MSG_BYTES !== undefined && env.QUEUE_MAX_MSG_BYTES < needed) {
    ctx.addIssue({
      code: 'custom',
      path: ['QUEUE_MAX_MSG_BYTES'],
      message: `must be at least PAYLOAD_LIMIT_BYTES + ${HEADER_HEADROOM_BYTES} (${needed}): headers count against it; unset it to derive it`,
    });
  }
  const inFlight = dispatchCeilingMs(env);
  if (env.IDEMPOTENCY_TTL_MS <= inFlight) {
    ctx.addIssue({
      code: 'custom',
      path: ['IDEMPOTENCY_TTL_MS'],
      message: `must exceed LIVE_TIMEOUT_MS + LIVE_PROOF_WAIT_MS + PUBLISH_TIMEOUT_MS (${inFlight}) so a key outlives its own dispatch`,
    });
  }
  const redelivery = fanoutRedeliveryMs(env);
  if (env.IDEMPOTENCY_TTL_MS <= redelivery) {
    ctx.addIssue({
      code: 'custom',
      path: ['IDEMPOTENCY_TTL_MS'],
      message: `must exceed FANOUT_ACK_WAIT_MS + LIVE_TIMEOUT_MS + LIVE_PROOF_WAIT_MS + PUBLISH_TIMEOUT_MS (${redelivery}): a chunk of a killed fan-out worker comes back after FANOUT_ACK_WAIT_MS, and its copies must still be remembered then or they are stored twice; raise IDEMPOTENCY_TTL_MS or lower FANOUT_ACK_WAIT_MS`,
    });
  }
}

/**
 * The latest a fan-out chunk's redelivery re-places a copy its killed worker placed (issue 44):
 * JetStream gives the chunk to another worker FANOUT_ACK_WAIT_MS after the worker's last word,
 * and that worker's last copy may have been a whole dispatch in flight. The queue's duplicate
 * window (IDEMPOTENCY_TTL_MS) must outlast it. A chunk nak'd for a failure of the moment comes
 * back after a second and counts no ack wait; the consumer's deliveries are unbounded (a chunk is
 * never given up on), so an outage longer than the window may still store a copy twice.
 */
export function fanoutRedeliveryMs(
  env: Pick<
    Env,
    'FANOUT_ACK_WAIT_MS' | 'LIVE_TIMEOUT_MS' | 'LIVE_PROOF_WAIT_MS' | 'PUBLISH_TIMEOUT_MS'
  >,
): number {
  return env.FANOUT_ACK_WAIT_MS + dispatchCeilingMs(env);
}

/**
 * The longest one event's dispatch waits on NATS: the live push (a batch's: its holders question,
 * then the proof of what was written), then the queue publish.
 */
export function dispatchCeilingMs(
  env: Pick<Env, 'LIVE_TIMEOUT_MS' | 'LIVE_PROOF_WAIT_MS' | 'PUBLISH_TIMEOUT_MS'>,
): number {
  return env.LIVE_TIMEOUT_MS + env.LIVE_PROOF_WAIT_MS + env.PUBLISH_TIMEOUT_MS;
}
