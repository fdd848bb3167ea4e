/**
 * @herald/sdk: receive Herald events over WebSockets (herald.v1: acks, dedup, reconnect) and
 * dispatch them over HTTP, in browsers, Node and React Native.
 */

export type { ErrorCode } from '@herald/proto/wire';
export { DispatchStatus, isUuidV4 } from '@herald/proto/wire';
export type { BackoffOptions } from './backoff.js';
export type { DeviceStore } from './device.js';
export {
  type ClientErrorCode,
  HeraldError,
  type HeraldErrorCode,
  type HeraldErrorDetails,
  type HeraldErrorKind,
} from './errors.js';
export { Herald } from './herald.js';
export type { Logger } from './logger.js';
export type { HeraldOptions } from './options.js';
export type {
  Client,
  ConnectionListener,
  ConnectionState,
  ErrorListener,
  EventListener,
  HeraldEvent,
  HistoryOptions,
  HistoryPage,
  InboxEvent,
  NotifyAccepted,
  NotifyEvent,
  NotifyFailed,
  NotifyInput,
  NotifyManyOptions,
  NotifyResult,
  Subscription,
  Unsubscribe,
} from './types.js';
export type { WebSocketConstructor, WebSocketLike } from './websocket.js';
