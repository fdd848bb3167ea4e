import {
  HeraldError,
  type NotifyRequest,
  type PushContent,
  parseNotifyRequest,
} from '@herald/proto';
import { validateIdempotencyKey } from './idempotency.js';
import { memberValue, payloadOf, scanOrRefuse } from './json-body.js';
import { parsePushContent } from './push-content.js';
import { type Scanned, type Span, scanJson } from './raw-json.js';

/** What the accept step reads of a request. */
export interface AcceptInput {
  /** The body's bytes, as received. */
  body: Uint8Array;
  /** The Idempotency-Key header, if any. */
  idempotencyKey?: string | undefined;
}

/**
 * A body naming a `topic` (issue 44): the topic dispatch accepts it (topics/topic-accept.ts)
 * from the members scanned here.
 */
export interface TopicBody {
  topicMembers: ReadonlyMap<string, Span>;
  idempotencyKey: string | undefined;
}

/** A request whose body and headers passed every check that needs no other service. */
export interface Accepted {
  /** The three small fields, validated; `payload` is only known to be present. */
  request: Omit<NotifyRequest, 'payload'>;
  /** The payload's original JSON bytes (a view into the body): exactly what reaches the socket. */
  payload: Uint8Array;
  /** The body's `push` field (issue 40): what a push notification of this event shows. */
  push: PushContent | undefined;
  idempotencyKey: string | undefined;
}

const SHAPE = 'send a JSON object with recipient, payload, api_key and client';
/** Stands in for the payload when the small fields are validated: only its presence matters. */
const PRESENT = true;

/**
 * Step 1 of a dispatch: parse and validate. The body is scanned once; only the three small fields
 * are decoded (for zod), and the payload stays bytes. Throws the HeraldError naming the field at
 * fault, in the same order as ever: UTF-8, JSON, object, fields, payload size, Idempotency-Key.
 */
export function accept(
  input: AcceptInput,
  limits: { payloadLimitBytes: number },
): Accepted | TopicBody {
  const { body } = input;
  const scanned = scanOrRefuse(body, scanJson, SHAPE);
  if (scanned.kind !== 'object') {
    throw new HeraldError(
      'invalid_json',
      `The body must be a JSON object, not ${kindOf(scanned.kind)}: ${SHAPE}`,
      { field: 'body' },
    );
  }
  const { members } = scanned;
  // One lookup per direct event: a topic event's body is the topic dispatch's to read.
  if (members.has('topic')) {
    return { topicMembers: members, idempotencyKey: validateIdempotencyKey(input.idempotencyKey) };
  }
  const payloadSpan = members.get('payload');
  // The three fields picked out by name: a rest spread to drop `payload` was measurable per event.
  const { recipient, api_key, client } = parseNotifyRequest({
    recipient: memberValue(body, members, 'recipient'),
    payload: payloadSpan ? PRESENT : undefined,
    api_key: memberValue(body, members, 'api_key'),
    client: memberValue(body, members, 'client'),
  });
  const request = { recipient, api_key, client };
  // parseNotifyRequest refuses a body without a payload, so the span is there.
  const payload = payloadOf(body, payloadSpan, limits.payloadLimitBytes);
  const push = pushOf(body, members);
  const idempotencyKey = validateIdempotencyKey(input.idempotencyKey);
  return { request, payload, push, idempotencyKey };
}

/**
 * A body's (or a batch event's) `push` member, validated; undefined without one, at the cost of a
 * map lookup: a body without `push` decodes nothing more.
 */
export function pushOf(
  body: Uint8Array,
  members: Parameters<typeof memberValue>[1],
): PushContent | undefined {
  return members.has('push') ? parsePushContent(memberValue(body, members, 'push')) : undefined;
}

function kindOf(kind: Exclude<Scanned['kind'], 'object'>): string {
  if (kind === 'null') return 'null';
  if (kind === 'array') return 'an array';
  return `a ${kind}`;
}
