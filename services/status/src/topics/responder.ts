import type { Logger } from '@herald/kit';
import { TOPIC_API_SUBJECT, TopicRequest } from '@herald/proto';
import type { Kysely } from 'kysely';
import type { NatsConnection, Subscription } from 'nats';
import type { StatusDb } from '../db-schema.js';
import { serveRequests } from '../request-api.js';
import { chunkOf, snapshot } from './fanouts.js';
import { addMembers, deleteTopic, listMembers, removeMembers, type TopicCaps } from './store.js';

export interface TopicApiDeps {
  nc: NatsConnection;
  db: Kysely<StatusDb>;
  logger: Logger;
  caps: TopicCaps;
}

/**
 * Answers TOPIC_API_SUBJECT (ingress's topic routes, its topic dispatch and fan-out workers) in the
 * status queue group. Every operation names its account (ingress takes it from the verified key)
 * and touches only that account's rows: another account's topic is, to it, no topic at all.
 */
export function serveTopicApi(deps: TopicApiDeps): Subscription {
  return serveRequests({
    nc: deps.nc,
    logger: deps.logger,
    subject: TOPIC_API_SUBJECT,
    schema: TopicRequest,
    what: 'topic',
    run: (q) => run(deps, q),
  });
}

async function run(deps: TopicApiDeps, q: TopicRequest): Promise<Record<string, unknown>> {
  const { db } = deps;
  switch (q.op) {
    case 'add':
      return { ...(await addMembers(db, q.account_id, q.topic, q.recipients, deps.caps)) };
    case 'remove':
      return { ...(await removeMembers(db, q.account_id, q.topic, q.recipients)) };
    case 'list':
      return { ...(await listMembers(db, q.account_id, q.topic, q.cursor, q.limit)) };
    case 'delete':
      return await deleteTopic(db, q.account_id, q.topic);
    case 'snapshot':
      return {
        ...(await snapshot(db, {
          account: q.account_id,
          topic: q.topic,
          id: q.id,
          exclude: q.exclude,
          chunkSize: q.chunk_size,
        })),
      };
    case 'chunk':
      return await chunkOf(db, q.account_id, q.id, q.chunk);
  }
}
