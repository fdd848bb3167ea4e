import { type FanoutItem, fanoutSubjects, HeraldError } from '@herald/proto';
import type { TopicClient } from '@herald/status-client';
import type { JetStreamClient } from 'nats';
import type { IngressConfig } from '../config.js';
import { fingerprintOf } from '../idempotency.js';
import { createIdempotentDelivery } from '../idempotent-delivery.js';
import { fanout, notDelivered, type Outcome } from '../outcome.js';
import type { DispatchInput, Pipeline } from '../pipeline.js';
import type { TopicAccepted } from './topic-accept.js';

export interface TopicDispatchDeps {
  pipeline: Pipeline;
  topics: Pick<TopicClient, 'snapshot'>;
  js: JetStreamClient;
  config: Pick<IngressConfig, 'FANOUT_CHUNK_SIZE' | 'PUBLISH_TIMEOUT_MS'>;
}

/** Chunk messages published at once while a fan-out is accepted. */
const PUBLISH_WINDOW = 64;

export type TopicDispatch = (
  accepted: TopicAccepted,
  idempotencyKey: string | undefined,
  input: DispatchInput,
) => Promise<Outcome>;

/**
 * `POST /notify` with `topic` (issue 44): authorised as a direct event is (key, client, Origin,
 * scope; one rate token), under its Idempotency-Key like one, then accepted durably: the
 * membership is snapshotted in the status service (chunks of FANOUT_CHUNK_SIZE), and one work item
 * per chunk is published into HERALD_FANOUT, each acked by JetStream, before the 202. The copies
 * are the fan-out workers' (fanout-worker.ts). A retry under the same key (or after a lost answer)
 * gets the same id, the same snapshot and the same chunks (JetStream drops their second publish).
 */
export function createTopicDispatch(deps: TopicDispatchDeps): TopicDispatch {
  const { pipeline, topics, js, config } = deps;
  const deliverOnce = createIdempotentDelivery(pipeline.store, pipeline.logger);
  return async function dispatchTopic(accepted, idempotencyKey, input) {
    pipeline.refuseWhileDown();
    const key = await pipeline.authorise(
      { api_key: accepted.api_key, client: accepted.client },
      input,
    );
    const { rateLimiter } = pipeline;
    if (rateLimiter && !rateLimiter.takeNow(key)) await rateLimiter.take(key);
    const account = key.account_id;
    const fingerprint = () =>
      fingerprintOf({
        recipient: `topic:${accepted.topic}\n${accepted.exclude.join(',')}`,
        client: accepted.client,
        payload: accepted.payload,
        push: accepted.push,
      });
    return deliverOnce(account, idempotencyKey, fingerprint, async (id) => {
      try {
        const snap = await topics.snapshot({
          account,
          topic: accepted.topic,
          id,
          exclude: accepted.exclude,
          chunkSize: config.FANOUT_CHUNK_SIZE,
        });
        const ts = pipeline.now();
        const base = {
          v: 1 as const,
          id,
          topic: accepted.topic,
          ts,
          key,
          payload_json: Buffer.from(accepted.payload).toString('utf8'),
          ...(accepted.push === undefined ? {} : { push: accepted.push }),
        };
        const subject = fanoutSubjects.chunk(account);
        for (let from = 0; from < snap.chunks; from += PUBLISH_WINDOW) {
          const to = Math.min(snap.chunks, from + PUBLISH_WINDOW);
          const acks = [];
          for (let chunk = from; chunk < to; chunk++) {
            const item: FanoutItem = { ...base, chunk };
            acks.push(
              js.publish(subject, JSON.stringify(item), {
                msgID: `${id}:${chunk}`,
                timeout: config.PUBLISH_TIMEOUT_MS,
              }),
            );
          }
          await Promise.all(acks);
        }
        return fanout(id, snap.members);
      } catch (err) {
        if (err instanceof HeraldError) return notDelivered(err, id);
        pipeline.logger.error({ err: String(err), id }, 'could not accept a topic event');
        return notDelivered(
          new HeraldError(
            'unavailable',
            'The fan-out queue did not accept this topic event: retry shortly (with the same Idempotency-Key, nobody gets it twice)',
          ),
          id,
        );
      }
    });
  };
}
