import { HeraldError } from '@herald/proto';
import { accept } from './accept.js';
import type { IngressConfig } from './config.js';
import { fingerprintOf } from './idempotency.js';
import { createIdempotentDelivery } from './idempotent-delivery.js';
import type { Outcome } from './outcome.js';
import type { DispatchInput, Pipeline } from './pipeline.js';
import { attributeRefusal } from './refusals/refusal-log.js';
import type { Target } from './target.js';
import { acceptTopic } from './topics/topic-accept.js';
import type { TopicDispatch } from './topics/topic-dispatch.js';

/**
 * The single dispatch behind `POST /notify` and `rt.dispatch.<account>`. Resolves with its outcome
 * to answer; throws the HeraldError of a refused request (or a bug), which the transport's error
 * boundary answers.
 */
export type Dispatch = (input: DispatchInput) => Promise<Outcome>;

/**
 * The steps of a dispatch after its key is verified and authorised for the target: one rate
 * token, then idempotency (with a key: `fingerprint` says what it promises to repeat), then
 * deliver (live or queue, each outcome a status record). Shared by the single dispatch and the
 * Pusher HTTP API (pusher/), whose key comes verified with its app: no plaintext key exists there.
 */
export type DispatchVerified = (
  target: Target,
  idempotency?: { key: string | undefined; fingerprint: () => string },
) => Promise<Outcome>;

export function createDispatchVerified(pipeline: Pipeline): DispatchVerified {
  const { rateLimiter, deliver } = pipeline;
  const deliverOnce = createIdempotentDelivery(pipeline.store, pipeline.logger);
  return async function dispatchVerified(target, idempotency) {
    // After every check of the request, so a refused request spends no token.
    if (rateLimiter && !rateLimiter.takeNow(target.key)) {
      await rateLimiter.take(target.key).catch((err: unknown) => {
        throw attributeRefusal(err, target.key);
      });
    }
    return deliverOnce(
      target.account,
      idempotency?.key,
      idempotency?.fingerprint ?? noKey,
      (id, msgId) => deliver(target, id, msgId),
    );
  };
}

function noTopics(): HeraldError {
  return new HeraldError('invalid_field', 'topic is not accepted here: send recipient', {
    field: 'topic',
  });
}

/** Never called: without an Idempotency-Key there is nothing to fingerprint. */
const noKey = () => '';

/**
 * The front door of one event: accept (parse + validate) → authorise (key, then one rate token)
 * → idempotency → deliver (live or queue), each step given only what it reads. The transport
 * answers (the fifth step, `answer.ts`).
 */
export function createDispatch(
  pipeline: Pipeline,
  config: Pick<IngressConfig, 'PAYLOAD_LIMIT_BYTES'>,
  dispatchVerified: DispatchVerified = createDispatchVerified(pipeline),
  /** `POST /notify` with `topic` (issue 44); without it, such a body is refused. */
  dispatchTopic?: TopicDispatch,
): Dispatch {
  const { authorise } = pipeline;
  const limits = { payloadLimitBytes: config.PAYLOAD_LIMIT_BYTES };
  return async function dispatch(input) {
    const { source } = input;
    // First of all: a source sending bad keys is refused before it costs a parse or a lookup.
    pipeline.checkSource(source);
    try {
      const accepted = accept(input, limits);
      if ('topicMembers' in accepted) {
        if (!dispatchTopic) throw noTopics();
        const topic = acceptTopic(input.body, accepted.topicMembers, limits);
        return await dispatchTopic(topic, accepted.idempotencyKey, input);
      }
      const { request, payload, push, idempotencyKey } = accepted;
      pipeline.refuseWhileDown();
      const key = await authorise(request, input);
      const target = { key, account: key.account_id, recipient: request.recipient, payload, push };
      // What the Idempotency-Key promises to repeat: a reuse with another body is a 422.
      return await dispatchVerified(target, {
        key: idempotencyKey,
        fingerprint: () => fingerprintOf({ ...target, client: request.client }),
      });
    } catch (err) {
      pipeline.countFailure(source, err);
      await pipeline.attributeBadRequest(err, input.body);
      throw err;
    }
  };
}
