import {
  Client,
  HeraldError,
  invalidApiKey,
  type PushContent,
  TOPIC_EXCLUDE_MAX,
  TopicName,
  TopicRecipient,
} from '@herald/proto';
import { z } from 'zod';
import { pushOf } from '../accept.js';
import { memberValue, payloadOf } from '../json-body.js';
import type { Span } from '../raw-json.js';

/** A `POST /notify` body naming a `topic` instead of a `recipient` (issue 44), validated. */
export interface TopicAccepted {
  topic: string;
  api_key: string;
  client: Client;
  /** Members who get no copy (the actor), lower-cased. */
  exclude: string[];
  /** The payload's original JSON bytes: each copy carries them untouched. */
  payload: Uint8Array;
  push: PushContent | undefined;
}

const Exclude = z
  .array(TopicRecipient, { error: 'exclude must be an array of recipient UUIDs' })
  .max(TOPIC_EXCLUDE_MAX, `exclude must name at most ${TOPIC_EXCLUDE_MAX} recipients`);

/**
 * The accept step of a topic event: the same body as a direct event's with `topic` (and an
 * optional `exclude`) for `recipient`; each field at fault is named, in a fixed order.
 */
export function acceptTopic(
  body: Uint8Array,
  members: ReadonlyMap<string, Span>,
  limits: { payloadLimitBytes: number },
): TopicAccepted {
  if (members.has('recipient')) {
    throw new HeraldError(
      'invalid_field',
      'recipient and topic cannot both be given: send recipient for one user, or topic for every member of a topic',
      { field: 'topic' },
    );
  }
  for (const field of ['topic', 'payload', 'api_key', 'client'] as const) {
    if (!members.has(field)) {
      throw new HeraldError(
        field === 'api_key' ? 'missing_api_key' : 'missing_field',
        `${field} is required with topic: ${HINTS[field]}`,
        { field },
      );
    }
  }
  const topic = TopicName.safeParse(memberValue(body, members, 'topic'));
  if (!topic.success) throw invalid('topic', topic.error);
  const apiKey = memberValue(body, members, 'api_key');
  if (typeof apiKey !== 'string') throw invalidApiKey();
  const client = Client.safeParse(memberValue(body, members, 'client'));
  if (!client.success) {
    throw new HeraldError('invalid_client', 'client must be "web" or "mobile"', {
      field: 'client',
    });
  }
  const exclude = members.has('exclude')
    ? Exclude.safeParse(memberValue(body, members, 'exclude'))
    : { success: true as const, data: [] };
  if (!exclude.success) throw invalid('exclude', exclude.error);
  const payload = payloadOf(body, members.get('payload'), limits.payloadLimitBytes);
  return {
    topic: topic.data,
    api_key: apiKey,
    client: client.data,
    exclude: [...new Set(exclude.data)],
    payload,
    push: pushOf(body, members),
  };
}

const HINTS = {
  topic: 'the name of one of your topics',
  payload: 'any JSON value to deliver to every member',
  api_key: 'put your Herald API key in the JSON body (never in a header)',
  client: 'either "web" or "mobile", matching your key',
} as const;

function invalid(name: string, error: z.ZodError): HeraldError {
  const issue = error.issues[0];
  const path = issue?.path.length ? `${name}.${issue.path.join('.')}` : name;
  return new HeraldError('invalid_field', issue?.message ?? `${name} is invalid`, { field: path });
}
