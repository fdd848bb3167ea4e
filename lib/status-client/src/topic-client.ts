import { type Answer, NatsRequester, type ReplySchema } from '@herald/nats';
import {
  TOPIC_API_SUBJECT,
  TopicChangeReply,
  TopicChunkReply,
  TopicDeleteReply,
  TopicListReply,
  type TopicRequest,
  TopicSnapshotReply,
} from '@herald/proto';
import type { NatsConnection } from 'nats';

/** What a reply schema reads (its type, where proto exports only the schema). */
type ReplyOf<S> = S extends ReplySchema<infer T> ? T : never;

export type TopicChangeAnswer = Answer<ReplyOf<typeof TopicChangeReply>>;
export type TopicListAnswer = Answer<ReplyOf<typeof TopicListReply>>;
export type TopicDeleteAnswer = Answer<ReplyOf<typeof TopicDeleteReply>>;
export type TopicSnapshotAnswer = Answer<ReplyOf<typeof TopicSnapshotReply>>;
export type TopicChunkAnswer = Answer<ReplyOf<typeof TopicChunkReply>>;

/** What no answer on the subject is, in words a caller of the topic routes is shown. */
export const TOPIC_API_UNAVAILABLE =
  'topics are unavailable: the status service did not answer rt.topicapi.request; retry shortly';

/**
 * An account's topics (issue 44), kept by the status service and asked for over
 * `rt.topicapi.request` (proto/src/topics.ts). Every operation names its account, which ingress
 * takes from the verified key. Each call resolves with the answer or rejects with a HeraldError:
 * the service's refusal with its code, or `unavailable` (Retry-After 1) past `timeoutMs`.
 */
export class TopicClient {
  readonly #requester: NatsRequester;
  readonly #timeoutMs: number;

  constructor(nc: NatsConnection, timeoutMs: number) {
    this.#requester = new NatsRequester(nc);
    this.#timeoutMs = timeoutMs;
  }

  change(
    op: 'add' | 'remove',
    account: string,
    topic: string,
    recipients: string[],
  ): Promise<TopicChangeAnswer> {
    return this.#ask({ v: 1, op, account_id: account, topic, recipients }, TopicChangeReply);
  }

  list(
    account: string,
    topic: string,
    cursor: string | undefined,
    limit: number,
  ): Promise<TopicListAnswer> {
    const q: TopicRequest = { v: 1, op: 'list', account_id: account, topic, limit };
    if (cursor !== undefined) q.cursor = cursor;
    return this.#ask(q, TopicListReply);
  }

  delete(account: string, topic: string): Promise<TopicDeleteAnswer> {
    return this.#ask({ v: 1, op: 'delete', account_id: account, topic }, TopicDeleteReply);
  }

  /** Keeps the topic's membership now, less `exclude`, in chunks, under the event's id. */
  snapshot(q: {
    account: string;
    topic: string;
    id: string;
    exclude: string[];
    chunkSize: number;
  }): Promise<TopicSnapshotAnswer> {
    return this.#ask(
      {
        v: 1,
        op: 'snapshot',
        account_id: q.account,
        topic: q.topic,
        id: q.id,
        exclude: q.exclude,
        chunk_size: q.chunkSize,
      },
      TopicSnapshotReply,
    );
  }

  chunk(account: string, id: string, chunk: number): Promise<TopicChunkAnswer> {
    return this.#ask({ v: 1, op: 'chunk', account_id: account, id, chunk }, TopicChunkReply);
  }

  #ask<T>(request: TopicRequest, schema: ReplySchema<T>): Promise<Answer<T>> {
    return this.#requester.requestJson(TOPIC_API_SUBJECT, request, schema, this.#timeoutMs, {
      message: TOPIC_API_UNAVAILABLE,
      retryAfter: 1,
    });
  }
}
