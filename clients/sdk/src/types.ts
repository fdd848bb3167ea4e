import type { DispatchStatus } from '@herald/proto/wire';
import type { HeraldError } from './errors.js';

/** The kind of key: `web` (browsers, bound to a registered domain) or `mobile` (apps, servers). */
export type Client = 'web' | 'mobile';

/** Whether events can flow: at least one subscription's socket is open and was accepted. */
export type ConnectionState = 'connected' | 'disconnected';

/** One herald.v1 event: the sender's payload with the id Herald assigned and its accept time. */
export interface HeraldEvent<TPayload = unknown> {
  /** Unique per event; a redelivery carries the same id (the SDK drops it). */
  id: string;
  /** Milliseconds since the epoch at which Herald accepted the event. */
  ts: number;
  /**
   * The topic a topic event's copy was sent to (`POST /notify` with `topic`); absent on an event
   * sent to this recipient directly.
   */
  topic?: string | undefined;
  /** The sender's JSON payload, as sent. Not validated: type it with `subscribe<T>()`. */
  payload: TPayload;
}

/** Receives the payload; an advanced listener also reads the envelope (id, ts). */
export type EventListener<TPayload = unknown> = (
  payload: TPayload,
  event: HeraldEvent<TPayload>,
) => void;

export type ConnectionListener = (state: ConnectionState) => void;

export type ErrorListener = (error: HeraldError) => void;

/** Removes what was added. Calling it twice is harmless. */
export type Unsubscribe = () => void;

/**
 * What `herald.subscribe(recipient)` returns. Subscriptions of the same recipient on one
 * instance share one socket, which closes when the last of them unsubscribes; each removes only
 * the listeners it added.
 */
export interface Subscription<TPayload = unknown> {
  /** The recipient's UUID, lower case. */
  readonly recipient: string;
  /** Calls `listener(payload, event)` for every event, once per id, then acks it. */
  listen(listener: EventListener<TPayload>): Unsubscribe;
  /**
   * Calls `listener(error)` when the edge refuses the socket (`error.code`, `error.closeCode`):
   * after 4400, 4401 or 4403 the subscription stops retrying; after 4429 or 4503 it retries.
   */
  onError(listener: ErrorListener): Unsubscribe;
  /** This recipient's socket going up or down, once per transition. */
  onConnectionChange(listener: ConnectionListener): Unsubscribe;
  /** Whether this recipient's socket is open and accepted. */
  connected(): boolean;
  /** Removes this subscription's listeners; closes the socket if no other uses it. Idempotent. */
  unsubscribe(): void;
  /**
   * Inbox mode (a key made with `--inbox-days`): calls `listener(unread)` with the recipient's
   * unread count, sent by the server on connect and after any change on any device. Never called
   * for a key without inbox mode.
   */
  onInbox(listener: (unread: number) => void): Unsubscribe;
  /** The last unread count the server sent; undefined until one came (no inbox mode, not yet). */
  unread(): number | undefined;
  /**
   * Marks these events (1 to 100 ids) read on the server, for every device; resolves to the
   * unread count after it, which every socket of the recipient also gets through `onInbox`.
   * Rejects as `history` does.
   */
  markRead(ids: readonly string[]): Promise<number>;
  /** Marks every event of the inbox read; as `markRead`. */
  markAllRead(): Promise<number>;
  /**
   * One page of the inbox, newest first: `before` is the `next` of the page before (null or
   * absent: the newest), `limit` 1-100 (default 20). Inbox requests (these and read marks) go
   * one at a time on the socket, in call order. Rejects with a `TypeError` for a bad argument, or
   * a `HeraldError`: `not_connected` when the socket is not open or goes before the answer; the
   * server's code for a refused request (`inbox_disabled`: the key keeps no inbox).
   */
  history(options?: HistoryOptions): Promise<HistoryPage<TPayload>>;
}

/** One event of the inbox, as `history` returns it. */
export interface InboxEvent<TPayload = unknown> extends HeraldEvent<TPayload> {
  /** Marked read on any device. */
  read: boolean;
}

export interface HistoryOptions {
  /** The `next` of the page before; null or absent for the newest page. */
  before?: string | null;
  /** 1 to 100; default 20. */
  limit?: number;
}

/** One page of history: newest first; `next` fetches the older page, null at the end. */
export interface HistoryPage<TPayload = unknown> {
  events: InboxEvent<TPayload>[];
  next: string | null;
}

export interface NotifyInput {
  /** The user to notify: a UUID v4 (any case). */
  recipient: string;
  /** Any JSON value; delivered as sent. */
  payload: unknown;
  /** Sent as the `Origin` header (servers using a web key). Browsers set Origin themselves. */
  origin?: string;
  /** Overrides the instance's `client` for this call. */
  client?: Client;
  /** Sent as `Idempotency-Key`: a retried call with the same key delivers or stores at most once. */
  idempotencyKey?: string;
}

/** One event of `notifyMany`. */
export interface NotifyEvent {
  /** The user to notify: a UUID v4 (any case). */
  recipient: string;
  /** Any JSON value; delivered as sent. */
  payload: unknown;
}

/** Options of one `notifyMany` call, covering the whole batch. */
export interface NotifyManyOptions {
  /** Sent as the `Origin` header (servers using a web key). Browsers set Origin themselves. */
  origin?: string;
  /** Overrides the instance's `client` for this call. */
  client?: Client;
  /** Sent as `Idempotency-Key`: a retried batch with the same key and events gets the same results. */
  idempotencyKey?: string;
}

/** The event was pushed to an open socket (HTTP 200) or queued for the next connect (202). */
export interface NotifyAccepted {
  status: typeof DispatchStatus.sent | typeof DispatchStatus.queued;
  /** The event id the recipient will see in `HeraldEvent.id`. */
  id: string;
  httpStatus: number;
  error?: undefined;
}

/** Nothing was pushed or stored; `error.code` says why (and `error.retryAfter` when to retry). */
export interface NotifyFailed {
  status: typeof DispatchStatus.failed;
  id?: undefined;
  /** The HTTP status, or 0 when no response arrived (network error, timeout). */
  httpStatus: number;
  error: HeraldError;
}

/** What `notify` resolves to; switch on `status`. */
export type NotifyResult = NotifyAccepted | NotifyFailed;
