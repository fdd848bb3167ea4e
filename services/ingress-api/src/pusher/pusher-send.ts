import type { Logger } from '@herald/kit';
import type { Publisher } from '@herald/nats';
import type { VerifiedKey } from '@herald/proto';
import { outcomeOfError } from '../answer.js';
import type { DispatchVerified } from '../dispatch.js';
import type { Outcome } from '../outcome.js';
import type { Pipeline } from '../pipeline.js';
import type { PusherDelivery } from './pusher-plan.js';

export interface PusherSendDeps {
  /** The dispatch steps after authorisation: rate token, deliver (live or queue), status record. */
  dispatchVerified: DispatchVerified;
  /** The per-key rate: one token for a request's live fan-out, whatever its channels. */
  rateLimiter: Pipeline['rateLimiter'];
  /** Where fan-out messages leave (the pipeline's TurnPublisher). */
  publisher: Publisher;
  logger: Logger;
}

/**
 * Sends a Pusher request's deliveries with its app's bound key (already authorised for each):
 * the live fan-out first takes one rate token for the request (refused: nothing is sent), then
 * its messages are published (core NATS, at most once) while the durable events are dispatched,
 * concurrently across recipients and in request order for each recipient, so one user's events
 * keep their order. Resolves with the durable events' outcomes, in request order; a refusal or
 * failure of one is its outcome, never thrown.
 */
export async function sendDeliveries(
  deliveries: readonly PusherDelivery[],
  key: VerifiedKey,
  deps: PusherSendDeps,
): Promise<Outcome[]> {
  const durable: Extract<PusherDelivery, { kind: 'durable' }>[] = [];
  const fanOut: Extract<PusherDelivery, { kind: 'channel' }>[] = [];
  for (const d of deliveries) {
    if (d.kind === 'durable') durable.push(d);
    else fanOut.push(d);
  }
  const { rateLimiter } = deps;
  if (fanOut.length > 0 && rateLimiter && !rateLimiter.takeNow(key)) await rateLimiter.take(key);
  for (const { subject, message } of fanOut)
    deps.publisher.publish(subject, JSON.stringify(message));

  const one = async (d: (typeof durable)[number]): Promise<Outcome> => {
    const target = { key, account: key.account_id, recipient: d.recipient, payload: d.payload };
    try {
      return await deps.dispatchVerified(target);
    } catch (err) {
      // A refusal before delivery (rate_limited) or a bug: this event's outcome, told in order.
      return outcomeOfError(err, deps.logger, { route: 'pusher', recipient: d.recipient });
    }
  };
  // `sendToUser`'s one event: no grouping by recipient to do.
  if (durable.length === 1) return [await one(durable[0] as (typeof durable)[number])];
  const outcomes: Outcome[] = new Array(durable.length);
  const byRecipient = new Map<string, number[]>();
  durable.forEach((d, i) => {
    const list = byRecipient.get(d.recipient);
    if (list) list.push(i);
    else byRecipient.set(d.recipient, [i]);
  });
  await Promise.all(
    [...byRecipient.values()].map(async (indices) => {
      for (const i of indices) outcomes[i] = await one(durable[i] as (typeof durable)[number]);
    }),
  );
  return outcomes;
}
