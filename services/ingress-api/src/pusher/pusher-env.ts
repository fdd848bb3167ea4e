import { envInt } from '@herald/kit';
import { PUSHER_LIMITS } from '@herald/proto';

/**
 * The Pusher HTTP API's limits (issue 41, docs/api.md "Pusher protocol"), Pusher's own by
 * default. Spread into ingress's Env.
 */
export const PusherEnv = {
  /** Channels one `POST /apps/{id}/events` may name. Default 100; 1..1000. */
  PUSHER_MAX_CHANNELS: envInt(PUSHER_LIMITS.channels, 1, 1000),
  /** Events one `POST /apps/{id}/batch_events` may hold. Default 10; 1..1000. */
  PUSHER_MAX_BATCH_EVENTS: envInt(PUSHER_LIMITS.batchEvents, 1, 1000),
  /**
   * Bytes (UTF-8) of one event's `data` string. Default 10240; 1..1048576. A durable event's
   * envelope (`{"event","channel","data"}`) must also fit PAYLOAD_LIMIT_BYTES (else 413).
   */
  PUSHER_MAX_DATA_BYTES: envInt(PUSHER_LIMITS.dataBytes, 1, 1024 * 1024),
  /** Characters of an event name. Default 200; 1..1000. */
  PUSHER_MAX_EVENT_NAME: envInt(PUSHER_LIMITS.eventName, 1, 1000),
  /** Seconds an `auth_timestamp` may be off ingress's clock either way. Default 600; 1..3600. */
  PUSHER_TIMESTAMP_SKEW_S: envInt(PUSHER_LIMITS.timestampSkewS, 1, 3600),
};

/** What the Pusher routes read of the configuration. */
export interface PusherLimits {
  maxChannels: number;
  maxBatchEvents: number;
  maxDataBytes: number;
  maxEventName: number;
  timestampSkewS: number;
}

export function pusherLimitsOf(env: {
  PUSHER_MAX_CHANNELS: number;
  PUSHER_MAX_BATCH_EVENTS: number;
  PUSHER_MAX_DATA_BYTES: number;
  PUSHER_MAX_EVENT_NAME: number;
  PUSHER_TIMESTAMP_SKEW_S: number;
}): PusherLimits {
  return {
    maxChannels: env.PUSHER_MAX_CHANNELS,
    maxBatchEvents: env.PUSHER_MAX_BATCH_EVENTS,
    maxDataBytes: env.PUSHER_MAX_DATA_BYTES,
    maxEventName: env.PUSHER_MAX_EVENT_NAME,
    timestampSkewS: env.PUSHER_TIMESTAMP_SKEW_S,
  };
}

/**
 * Most bytes a Pusher request body may have: every event at its limits with every character
 * escaped by JSON (6 bytes for one), plus room for the keys and punctuation. Defaults: ~1.6 MB.
 */
export function pusherBodyLimit(l: PusherLimits, channelNameMax: number): number {
  const perEvent =
    6 * (l.maxDataBytes + l.maxEventName + l.maxChannels * (channelNameMax + 3)) + 1024;
  return Math.max(l.maxBatchEvents, 1) * perEvent + 1024;
}
