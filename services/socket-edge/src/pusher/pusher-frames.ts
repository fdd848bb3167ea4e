import type { HeraldError } from '@herald/proto';
import type { RawData } from 'ws';

/**
 * The Pusher protocol v7's frames as the edge writes and reads them: one JSON text frame each,
 * `{event, channel?, data}`. Server `data` is a JSON string for the handshake (pusher-js parses
 * it again) and an object for errors; pusher-js takes either.
 */

/** Pusher's close codes (pusher-js `getCloseAction`: 4000-4099 give up, 4100-4199 back off, 4200-4299 reconnect at once). */
export const PusherClose = {
  /** No app has this key, or its app was deleted. */
  unknownApp: 4001,
  /** The app is disabled: its bound key is revoked or expired, or the account's plan lapsed. */
  appDisabled: 4003,
  /** The account's concurrent-connection cap is reached. */
  overQuota: 4004,
  /** A protocol version other than 7. */
  unsupportedProtocol: 4007,
  /** No `protocol` parameter. */
  noProtocol: 4008,
  /** Unauthorized: bad sign-in, key scope or Origin, not signed in in time, terminated by the app. */
  unauthorized: 4009,
  /** Over capacity (this edge's sockets, the connect rate, auth or NATS unreachable): back off and retry. */
  overCapacity: 4100,
  /** The edge is shutting down: reconnect at once (another edge takes it). */
  reconnect: 4200,
  /** Nothing heard from the client within activity_timeout + 30 s. */
  noPong: 4201,
} as const;

/** The Pusher close code of a refusal, by Herald's error code. */
export function pusherCloseOf(err: HeraldError): number {
  switch (err.code) {
    case 'invalid_api_key':
      return PusherClose.unknownApp;
    case 'key_revoked':
    case 'key_expired':
    case 'plan_inactive':
      return PusherClose.appDisabled;
    case 'connection_limit':
      return PusherClose.overQuota;
    case 'unavailable':
    case 'internal':
    case 'too_many_connects':
    case 'auth_failures':
      return PusherClose.overCapacity;
    default:
      return PusherClose.unauthorized;
  }
}

export const PING_FRAME = '{"event":"pusher:ping","data":{}}';
export const PONG_FRAME = '{"event":"pusher:pong","data":{}}';

/**
 * The ping frame's bytes, made once: the proof ping follows every tick's events to a member
 * socket, and a string would be encoded again by ws for each.
 */
export const PING_BYTES = Buffer.from(PING_FRAME);
const PONG_BYTES = Buffer.from(PONG_FRAME);
const CLIENT_PING_BYTES = Buffer.from(PING_FRAME);

/**
 * The client's `pusher:pong` or `pusher:ping` exactly as pusher-js writes them, told from the
 * bytes without a decode or a JSON parse (a pong answers every proof ping); any other spelling
 * (spaces, another key order) is undefined here and goes through {@link readPusherFrame}.
 */
export function exactPingPong(raw: RawData, isBinary: boolean): 'pong' | 'ping' | undefined {
  if (isBinary || !Buffer.isBuffer(raw) || raw.length !== PONG_BYTES.length) return undefined;
  if (raw.equals(PONG_BYTES)) return 'pong';
  if (raw.equals(CLIENT_PING_BYTES)) return 'ping';
  return undefined;
}

export function connectionEstablished(socketId: string, activityTimeoutS: number): string {
  const data = JSON.stringify({ socket_id: socketId, activity_timeout: activityTimeoutS });
  return JSON.stringify({ event: 'pusher:connection_established', data });
}

/** A close reason from a message: printable ASCII, within the 123 bytes a close frame allows. */
export function closeReason(message: string): string {
  return message.replace(/[^\x20-\x7e]/g, '?').slice(0, 120);
}

export function errorFrame(code: number, message: string): string {
  return JSON.stringify({ event: 'pusher:error', data: { code, message } });
}

export function subscriptionSucceeded(channel: string): string {
  return JSON.stringify({ event: 'pusher_internal:subscription_succeeded', channel, data: '{}' });
}

/** A failed subscribe: `AuthError` 401 for a bad signature, else what is wrong, with 400 or 403. */
export function subscriptionError(
  channel: string,
  type: string,
  error: string,
  status: number,
): string {
  return JSON.stringify({
    event: 'pusher:subscription_error',
    channel,
    data: { type, error, status },
  });
}

export function signinSuccess(userData: string): string {
  return JSON.stringify({ event: 'pusher:signin_success', data: { user_data: userData } });
}

/** A channel event: `data` is the string as published, written as is. */
export function channelEvent(event: string, channel: string, data: string): string {
  return JSON.stringify({ event, channel, data });
}

/** A client frame: its event, its data (an object, a string pusher-js did not parse, …), its channel. */
export interface PusherClientFrame {
  event: string;
  data: unknown;
  channel: string | undefined;
}

/** Reads a client frame; undefined when it is not a text frame of a JSON object with an `event` string. */
export function readPusherFrame(raw: RawData, isBinary: boolean): PusherClientFrame | undefined {
  if (isBinary) return undefined;
  const text = Array.isArray(raw)
    ? Buffer.concat(raw).toString('utf8')
    : Buffer.isBuffer(raw)
      ? raw.toString('utf8')
      : Buffer.from(raw).toString('utf8');
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (typeof json !== 'object' || json === null || Array.isArray(json)) return undefined;
  const frame = json as Record<string, unknown>;
  if (typeof frame.event !== 'string') return undefined;
  return {
    event: frame.event,
    data: frame.data,
    channel: typeof frame.channel === 'string' ? frame.channel : undefined,
  };
}

/** A frame's `data` as an object: pusher-js sends objects, other clients a JSON string of one. */
export function dataObject(data: unknown): Record<string, unknown> | undefined {
  let value = data;
  if (typeof value === 'string') {
    try {
      value = JSON.parse(value);
    } catch {
      return undefined;
    }
  }
  return typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : undefined;
}
