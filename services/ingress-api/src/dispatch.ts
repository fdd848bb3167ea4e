import { accept } from './accept.js';
import type { IngressConfig } from './config.js';
import { fingerprintOf } from './idempotency.js';
import { createIdempotentDelivery } from './idempotent-delivery.js';
import type { Outcome } from './outcome.js';
import type { DispatchInput, Pipeline } from './pipeline.js';

/**
 * The single dispatch behind `POST /notify` and `rt.dispatch.<account>`. Resolves with its outcome
 * to answer; throws the HeraldError of a refused request (or a bug), which the transport's error
 * boundary answers.
 */
export type Dispatch = (input: DispatchInput) => Promise<Outcome>;

/**
 * The front door of one event: accept (parse + validate) → authorise (key, then one rate token)
 * → idempotency → deliver (live or queue), each step given only what it reads. The transport
 * answers (the fifth step, `answer.ts`).
 */
export function createDispatch(
  pipeline: Pipeline,
  config: Pick<IngressConfig, 'PAYLOAD_LIMIT_BYTES'>,
): Dispatch {
  const { authorise, rateLimiter, deliver } = pipeline;
  const limits = { payloadLimitBytes: config.PAYLOAD_LIMIT_BYTES };
  const deliverOnce = createIdempotentDelivery(pipeline.store, pipeline.logger);
  return async function dispatch(input) {
    const { source } = input;
    // First of all: a source sending bad keys is refused before it costs a parse or a lookup.
    pipeline.checkSource(source);
    try {
      const { request, payload, push, idempotencyKey } = accept(input, limits);
      pipeline.refuseWhileDown();
      const key = await authorise(request, input);
      // After every check of the request, so a refused request spends no token.
      if (rateLimiter && !rateLimiter.takeNow(key)) await rateLimiter.take(key);
      const target = { key, account: key.account_id, recipient: request.recipient, payload, push };
      // What the Idempotency-Key promises to repeat: a reuse with another body is a 422.
      const fingerprint = () => fingerprintOf({ ...target, client: request.client });
      return await deliverOnce(target.account, idempotencyKey, fingerprint, (id, msgId) =>
        deliver(target, id, msgId),
      );
    } catch (err) {
      pipeline.countFailure(source, err);
      throw err;
    }
  };
}
