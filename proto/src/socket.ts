import { z } from 'zod';
import { API_KEY_FORMAT } from './api-key.js';
import { HeraldError } from './errors.js';
import { INBOX_MAX_PAGE, INBOX_MAX_READ_IDS, InboxCursor, InboxEvent } from './inbox.js';
import { Client, invalidApiKey } from './notify.js';
import { UUID_V4 } from './uuid.js';

/** The longest recipient token accepted (query parameter or in-band frame), in characters. */
export const MAX_TOKEN_LENGTH = 4096;

/** Longest `device` id accepted, in characters. */
export const MAX_DEVICE_LENGTH = 64;
/** A device id: 1 to {@link MAX_DEVICE_LENGTH} characters of `[A-Za-z0-9_-]`. */
export const DEVICE_FORMAT = /^[A-Za-z0-9_-]{1,64}$/;
const DEVICE_HINT = `device must be 1 to ${MAX_DEVICE_LENGTH} characters of A-Z, a-z, 0-9, _ and -: send one id per installation, or leave device out`;

/**
 * The optional `ref` of an inbox request (herald.v1 `read`, `history`): 1 to 64 characters of
 * `[A-Za-z0-9_-]`, chosen by the client; the edge echoes it on the frame that answers that
 * request (`inbox`, `history` or `error`), so answers are told from unread notices. Without it
 * requests are answered as before, in order, with no ref.
 */
export const REQUEST_REF_FORMAT = /^[A-Za-z0-9_-]{1,64}$/;
export const RequestRef = z
  .string()
  .regex(REQUEST_REF_FORMAT, 'ref must be 1 to 64 characters of A-Z, a-z, 0-9, _ and -');

/** Query parameters of `wss {ws_url}/ws/connect`. */
export const ConnectParams = z.object({
  api_key: z.string({ error: 'api_key is required in the query string' }).regex(API_KEY_FORMAT),
  recipient: z
    .string({ error: 'recipient is required in the query string' })
    .regex(
      UUID_V4,
      'recipient must be a UUID v4 (xxxxxxxx-xxxx-4xxx-yxxx-xxxxxxxxxxxx, y in 8,9,a,b)',
    )
    .transform((s) => s.toLowerCase()),
  client: Client,
  /** The recipient token (a JWT), for keys that require one; checked by the edge. */
  token: z.string().optional(),
  /**
   * The client's installation id: each device gets every queued event once
   * (docs/architecture-history.md, "Per-device delivery"). Absent: the socket shares the
   * recipient's queue as before.
   */
  device: z.string().regex(DEVICE_FORMAT, DEVICE_HINT).optional(),
  /**
   * `batch=1`: the client reads {@link EventsFrame} (herald.v1 only), so the edge may send several
   * queued events in one frame, acked with one {@link AckFrame} listing their ids. Absent: one
   * `event` frame per event, as the spec says. Plain framing ignores it (one frame per event).
   */
  batch: z.literal('1', { error: 'batch must be 1, or left out' }).optional(),
});
export type ConnectParams = z.infer<typeof ConnectParams>;

/** herald.v1, server to client: one event. `payload` is the sender's JSON, untouched. */
export const EventFrame = z.object({
  type: z.literal('event'),
  id: z.string(),
  ts: z.number(),
  /** A topic event's copy (issue 44): the topic it was sent to; absent on a direct event. */
  topic: z.string().optional(),
  payload: z.unknown(),
});
export type EventFrame = z.infer<typeof EventFrame>;

/**
 * The most events one {@link EventsFrame} carries, and so the most ids one {@link AckFrame} lists:
 * 128 UUIDs fit the edge's default client frame limit (8,192 bytes) with room to spare. An edge
 * configured with a smaller frame limit sends fewer per frame, so every ack it asks for fits.
 */
export const MAX_EVENTS_PER_FRAME = 128;

/** One event inside an {@link EventsFrame}: an {@link EventFrame} without its `type`. */
export const BatchedEvent = z.object({
  id: z.string(),
  ts: z.number(),
  topic: z.string().optional(),
  payload: z.unknown(),
});
export type BatchedEvent = z.infer<typeof BatchedEvent>;

/**
 * herald.v1, server to client, only on sockets that connected with `batch=1`: queued events that
 * were ready together, in queue order, 1 to {@link MAX_EVENTS_PER_FRAME} of them. Each counts as
 * delivered only when its id is acked, as with `event`; live events still come one per frame.
 */
export const EventsFrame = z.object({
  type: z.literal('events'),
  events: z.array(BatchedEvent).min(1).max(MAX_EVENTS_PER_FRAME),
});
export type EventsFrame = z.infer<typeof EventsFrame>;

/**
 * herald.v1, server to client, sent just before a rejection close (4400/4401/4403/4429); also
 * in-band, the refusal of an inbox request (with that request's `ref`, when it had a good one).
 */
export const ErrorFrame = z.object({
  type: z.literal('error'),
  error: z.object({ code: z.string(), message: z.string(), field: z.string().optional() }),
  ref: RequestRef.optional(),
});
export type ErrorFrame = z.infer<typeof ErrorFrame>;

/**
 * herald.v1, server to client, inbox keys only: the recipient's unread count, on connect and
 * after every change on any device (proto/inbox.ts). `ref`: the answer to that `read` request;
 * a notice (connect, another socket's change) has none.
 */
export const InboxFrame = z.object({
  type: z.literal('inbox'),
  unread: z.number().int().min(0),
  ref: RequestRef.optional(),
});
export type InboxFrame = z.infer<typeof InboxFrame>;

/** herald.v1, server to client, inbox keys only: the page a `history` request asked for. */
export const HistoryFrame = z.object({
  type: z.literal('history'),
  events: z.array(InboxEvent),
  next: z.string().nullable(),
  /** The `ref` of the request this page answers, when it had one. */
  ref: RequestRef.optional(),
});
export type HistoryFrame = z.infer<typeof HistoryFrame>;

export const ServerFrame = z.discriminatedUnion('type', [
  EventFrame,
  EventsFrame,
  ErrorFrame,
  InboxFrame,
  HistoryFrame,
]);
export type ServerFrame = z.infer<typeof ServerFrame>;

/**
 * herald.v1, client to server: the event with this id was handled; or, with `ids`, every event
 * listed (1 to {@link MAX_EVENTS_PER_FRAME}, the answer to an {@link EventsFrame}). An id the edge
 * is not waiting for is ignored, as a single ack's is.
 */
export const AckFrame = z.union([
  z.object({ type: z.literal('ack'), id: z.string().min(1).max(64) }),
  z.object({
    type: z.literal('ack'),
    ids: z.array(z.string().min(1).max(64)).min(1).max(MAX_EVENTS_PER_FRAME),
  }),
]);
export type AckFrame = z.infer<typeof AckFrame>;

/**
 * herald.v1, client to server: a fresh recipient token for this socket, sent before the current
 * one expires, so the socket stays open (keys that require tokens).
 */
export const TokenFrame = z.object({
  type: z.literal('token'),
  token: z.string().min(1).max(MAX_TOKEN_LENGTH),
});
export type TokenFrame = z.infer<typeof TokenFrame>;

/** herald.v1, client to server, inbox keys only: mark events read, by id or all of them. */
export const ReadFrame = z.union([
  z.object({
    type: z.literal('read'),
    ids: z.array(z.string().min(1).max(64)).min(1).max(INBOX_MAX_READ_IDS),
    ref: RequestRef.optional(),
  }),
  z.object({ type: z.literal('read'), all: z.literal(true), ref: RequestRef.optional() }),
]);
export type ReadFrame = z.infer<typeof ReadFrame>;

/** herald.v1, client to server, inbox keys only: one page of history, newest first. */
export const HistoryRequestFrame = z.object({
  type: z.literal('history'),
  before: InboxCursor.nullable(),
  limit: z.number().int().min(1).max(INBOX_MAX_PAGE),
  ref: RequestRef.optional(),
});
export type HistoryRequestFrame = z.infer<typeof HistoryRequestFrame>;

export const ClientFrame = z.union([AckFrame, TokenFrame, ReadFrame, HistoryRequestFrame]);
export type ClientFrame = z.infer<typeof ClientFrame>;

/**
 * Builds a herald.v1 event frame around a payload's original JSON text without parsing it, so
 * the payload reaches the client byte for byte.
 */
export function encodeEventFrame(
  id: string,
  ts: number,
  payloadJson: string,
  topic?: string,
): string {
  return `{"type":"event","id":${JSON.stringify(id)},"ts":${ts}${topic === undefined ? '' : `,"topic":${JSON.stringify(topic)}`},"payload":${payloadJson}}`;
}

/** Builds an {@link EventsFrame} the same way: every payload's JSON text copied in untouched. */
export function encodeEventsFrame(
  events: readonly { id: string; ts: number; payloadJson: string }[],
): string {
  const parts = events.map(
    (e) => `{"id":${JSON.stringify(e.id)},"ts":${e.ts},"payload":${e.payloadJson}}`,
  );
  return `{"type":"events","events":[${parts.join(',')}]}`;
}

const REQUIRED = ['recipient', 'api_key', 'client'] as const;

const HINTS: Record<(typeof REQUIRED)[number], string> = {
  recipient: 'add recipient=<the UUID v4 of the user this socket receives for>',
  api_key: 'add api_key=<your Herald API key>',
  client: 'add client=web or client=mobile, matching your key',
};

/**
 * Validates the query of `/ws/connect` and returns its parameters (recipient lower-cased), or
 * throws the {@link HeraldError} naming the parameter at fault and how to fix it. Parameters are
 * checked in a fixed order so the same bad query always yields the same error.
 */
export function parseConnectParams(query: URLSearchParams): ConnectParams {
  const raw: Record<string, string> = {};
  for (const name of REQUIRED) {
    const value = query.get(name);
    // An api_key given but empty, or given twice (a query's array), is the body's wrong-typed key.
    if (name === 'api_key' && value !== null && (value === '' || query.getAll(name).length > 1))
      throw invalidApiKey();
    if (value === null || value === '') {
      const code = name === 'api_key' ? 'missing_api_key' : 'missing_field';
      throw new HeraldError(code, `${name} is required in the query string: ${HINTS[name]}`, {
        field: name,
      });
    }
    raw[name] = value;
  }
  const token = parseToken(query);
  if (token !== undefined) raw.token = token;
  const device = query.getAll('device');
  if (device.length > 1) {
    throw new HeraldError('invalid_field', `device must be given once: ${DEVICE_HINT}`, {
      field: 'device',
    });
  }
  if (device[0] !== undefined) raw.device = device[0];
  const batch = query.getAll('batch');
  if (batch.length > 1) {
    throw new HeraldError('invalid_field', 'batch must be given once, as batch=1', {
      field: 'batch',
    });
  }
  if (batch[0] !== undefined) raw.batch = batch[0];
  const parsed = ConnectParams.safeParse(raw);
  if (parsed.success) return parsed.data;
  const field = String(parsed.error.issues[0]?.path[0] ?? 'query');
  if (field === 'recipient') {
    throw new HeraldError(
      'invalid_recipient',
      'recipient must be a UUID v4 (xxxxxxxx-xxxx-4xxx-yxxx-xxxxxxxxxxxx, y in 8,9,a,b)',
      { field },
    );
  }
  if (field === 'client') {
    throw new HeraldError('invalid_client', 'client must be "web" or "mobile"', { field });
  }
  if (field === 'api_key') throw invalidApiKey();
  if (field === 'device') throw new HeraldError('invalid_field', DEVICE_HINT, { field });
  if (field === 'batch') {
    throw new HeraldError(
      'invalid_field',
      'batch must be 1 (this client reads "events" frames), or left out',
      { field },
    );
  }
  throw new HeraldError(
    'invalid_field',
    `${field}: ${parsed.error.issues[0]?.message ?? 'invalid value'}`,
    { field },
  );
}

/**
 * The optional `token` parameter: absent (undefined), or one non-empty value within
 * {@link MAX_TOKEN_LENGTH}. Whether the key needs one is the edge's to decide, once it is verified.
 */
function parseToken(query: URLSearchParams): string | undefined {
  const all = query.getAll('token');
  if (all.length === 0) return undefined;
  const [token] = all;
  if (all.length > 1 || token === undefined || token === '' || token.length > MAX_TOKEN_LENGTH) {
    throw new HeraldError(
      'invalid_token',
      `token must be given once, as a JWT of at most ${MAX_TOKEN_LENGTH} characters: send token=<the recipient token your server minted>`,
      { field: 'token' },
    );
  }
  return token;
}
