import {
  HeraldError,
  PUSHER_CHANNEL_NAME,
  PUSHER_LIMITS,
  SERVER_TO_USER_PREFIX,
} from '@herald/proto';
import type { PusherLimits } from './pusher-env.js';

/**
 * The Pusher HTTP API's request bodies (issue 41), parsed and held to the limits before anything is
 * looked up or sent: a refusal names the field and the limit, in Pusher-like plain text (400, or
 * 413 for data over its size).
 */

/** Which route a request is: its path's last part. */
export type PusherRouteKind = 'events' | 'batch_events' | 'user_events' | 'terminate_connections';

/** One event to one or more channels, validated. */
export interface PusherEvent {
  name: string;
  /** The data string as sent. */
  data: string;
  channels: string[];
  /** The publisher's socket, skipped by the fan-out, as Pusher does. */
  socket_id?: string | undefined;
}

export interface ParsedPusherRequest {
  events: PusherEvent[];
  /** `info` asked for on a batch: the answer is `{"batch":[{}…]}` rather than `{}`. */
  batchInfo: boolean;
}

const SOCKET_ID = /^\d+\.\d+$/;
/** A user id's characters: what a channel name may hold after `#server-to-user-`. */
const USER_ID = /^[-a-zA-Z0-9_=@,.;]+$/;
/** Made once: one per request was measurable (a fatal decoder refuses bytes that are not UTF-8). */
const strictUtf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * Parses the body of `kind` (the raw bytes; `userId` from the path for the user routes). Throws
 * the HeraldError naming the field at fault.
 */
export function parsePusherBody(
  kind: PusherRouteKind,
  body: Uint8Array,
  limits: PusherLimits,
  userId?: string,
): ParsedPusherRequest {
  const json = parseJson(body, kind);
  if (kind === 'terminate_connections') return { events: [], batchInfo: false };
  if (kind === 'user_events') {
    const channel = `${SERVER_TO_USER_PREFIX}${checkUserId(userId ?? '')}`;
    return { events: [eventOf(json, limits, [channel], '')], batchInfo: false };
  }
  if (kind === 'events') {
    return { events: [eventOf(json, limits, channelsOf(json, limits, ''), '')], batchInfo: false };
  }
  const { batch } = json;
  if (!Array.isArray(batch)) {
    throw invalid('batch must be an array of events {name, data, channel}', 'batch');
  }
  if (batch.length > limits.maxBatchEvents) {
    throw invalid(
      `batch holds ${batch.length} events, more than the ${limits.maxBatchEvents} one request may carry (PUSHER_MAX_BATCH_EVENTS): split it`,
      'batch',
    );
  }
  let batchInfo = false;
  const events = batch.map((item: unknown, i) => {
    const at = `batch[${i}].`;
    if (!isObject(item)) throw invalid(`${at.slice(0, -1)} must be an object`, 'batch');
    if (item.info !== undefined) batchInfo = true;
    if (typeof item.channel !== 'string') {
      throw invalid(`${at}channel must be a channel name (a string)`, `${at}channel`);
    }
    return eventOf(item, limits, [checkChannel(item.channel, `${at}channel`)], at);
  });
  return { events, batchInfo };
}

/** A user id from the path: what may follow `#server-to-user-` in a channel name. */
export function checkUserId(userId: string): string {
  const max = PUSHER_LIMITS.channelName - SERVER_TO_USER_PREFIX.length;
  if (userId.length === 0 || userId.length > max || !USER_ID.test(userId)) {
    throw invalid(
      `Invalid user_id ${JSON.stringify(userId.slice(0, 80))}: 1 to ${max} of the characters a-z A-Z 0-9 _ - = @ , . ;`,
      'user_id',
    );
  }
  return userId;
}

function eventOf(
  json: Record<string, unknown>,
  limits: PusherLimits,
  channels: string[],
  at: string,
): PusherEvent {
  const { name, data, socket_id } = json;
  if (typeof name !== 'string' || name.length === 0) {
    throw invalid(`${at}name must be a non-empty string: the event name`, `${at}name`);
  }
  if (name.length > limits.maxEventName) {
    throw invalid(
      `${at}name is ${name.length} characters, longer than ${limits.maxEventName} (PUSHER_MAX_EVENT_NAME)`,
      `${at}name`,
    );
  }
  if (name.startsWith('pusher:') || name.startsWith('pusher_internal:')) {
    throw invalid(
      `${at}name ${JSON.stringify(name)} uses a prefix Pusher reserves (pusher:, pusher_internal:): rename the event`,
      `${at}name`,
    );
  }
  if (typeof data !== 'string') {
    throw invalid(
      `${at}data must be a string (the pusher libraries send JSON.stringify of your data)`,
      `${at}data`,
    );
  }
  // Counted, not encoded: a lone surrogate counts 3 bytes either way (as U+FFFD would).
  const bytes = Buffer.byteLength(data, 'utf8');
  if (bytes > limits.maxDataBytes) {
    throw new HeraldError(
      'payload_too_large',
      `${at}data is ${bytes} bytes, over the ${limits.maxDataBytes} one event may carry (PUSHER_MAX_DATA_BYTES): send less`,
      { field: `${at}data` },
    );
  }
  if (socket_id !== undefined && (typeof socket_id !== 'string' || !SOCKET_ID.test(socket_id))) {
    throw invalid(
      `${at}socket_id must be a socket id like 1234.5678 (the one pusher-js was given)`,
      `${at}socket_id`,
    );
  }
  return { name, data, channels, ...(socket_id === undefined ? {} : { socket_id }) };
}

function channelsOf(json: Record<string, unknown>, limits: PusherLimits, at: string): string[] {
  const { channels, channel } = json;
  if (channels !== undefined && channel !== undefined) {
    throw invalid('Send either channels (a list) or channel (one name), not both', 'channels');
  }
  if (channel !== undefined) {
    if (typeof channel !== 'string') throw invalid('channel must be a string', 'channel');
    return [checkChannel(channel, 'channel')];
  }
  if (!Array.isArray(channels) || channels.length === 0) {
    throw invalid(
      `${at}channels must be a non-empty list of channel names (or send channel)`,
      'channels',
    );
  }
  if (channels.length > limits.maxChannels) {
    throw invalid(
      `channels names ${channels.length} channels, more than the ${limits.maxChannels} one event may go to (PUSHER_MAX_CHANNELS): trigger it in several requests`,
      'channels',
    );
  }
  return channels.map((c: unknown, i) => {
    if (typeof c !== 'string') throw invalid(`channels[${i}] must be a string`, `channels[${i}]`);
    return checkChannel(c, `channels[${i}]`);
  });
}

function checkChannel(channel: string, field: string): string {
  if (channel.length === 0 || channel.length > PUSHER_LIMITS.channelName) {
    throw invalid(
      `${field} must be 1 to ${PUSHER_LIMITS.channelName} characters, got ${channel.length}`,
      field,
    );
  }
  if (!PUSHER_CHANNEL_NAME.test(channel)) {
    throw invalid(
      `${field} ${JSON.stringify(channel)} is not a channel name: use only a-z A-Z 0-9 _ - = @ , . ;`,
      field,
    );
  }
  if (channel.startsWith('#') && !channel.startsWith(SERVER_TO_USER_PREFIX)) {
    throw invalid(
      `${field} ${JSON.stringify(channel)}: names starting with # are reserved, but for ${SERVER_TO_USER_PREFIX}<user id>`,
      field,
    );
  }
  if (channel.startsWith(SERVER_TO_USER_PREFIX))
    checkUserId(channel.slice(SERVER_TO_USER_PREFIX.length));
  return channel;
}

function parseJson(body: Uint8Array, kind: PusherRouteKind): Record<string, unknown> {
  if (body.byteLength === 0 && kind === 'terminate_connections') return {};
  let json: unknown;
  try {
    json = JSON.parse(strictUtf8.decode(body));
  } catch {
    throw new HeraldError('invalid_json', 'The body is not valid JSON: send a JSON object', {
      field: 'body',
    });
  }
  if (!isObject(json)) {
    throw new HeraldError('invalid_json', 'The body must be a JSON object', { field: 'body' });
  }
  return json;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function invalid(message: string, field: string): HeraldError {
  return new HeraldError('invalid_field', message, { field });
}
