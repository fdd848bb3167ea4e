import { HeraldError } from './errors.js';
import type { RecentIds } from './recent-ids.js';
import type { HeraldEvent, InboxEvent } from './types.js';

export interface ErrorDetail {
  code: string;
  message: string;
  field?: string | undefined;
}

/**
 * The herald.v1 frames a client receives (proto's ServerFrame, checked by hand). `ref`: the inbox
 * request the frame answers. `events`: queued events sent together, on a `batch=1` socket.
 */
export type ServerFrame =
  | ({ type: 'event' } & HeraldEvent)
  | { type: 'events'; events: HeraldEvent[] }
  | { type: 'error'; error: ErrorDetail; ref?: string | undefined }
  | { type: 'inbox'; unread: number; ref?: string | undefined }
  | { type: 'history'; events: InboxEvent[]; next: string | null; ref?: string | undefined };

/** Parses a text frame; undefined for anything else, which a newer edge may send and we skip. */
export function parseFrame(data: unknown): ServerFrame | undefined {
  if (typeof data !== 'string') return undefined;
  // biome-ignore lint/suspicious/noExplicitAny: checked field by field below
  let f: any;
  try {
    f = JSON.parse(data);
  } catch {
    return undefined;
  }
  if (typeof f !== 'object' || f === null) return undefined;
  const ref = typeof f.ref === 'string' ? f.ref : undefined;
  if (f.type === 'event' && isEvent(f)) return { type: 'event', ...eventOf(f) };
  // All or nothing, as a bad single event frame is skipped: what is not acked comes again.
  if (
    f.type === 'events' &&
    Array.isArray(f.events) &&
    f.events.length &&
    f.events.every(isEvent)
  ) {
    return { type: 'events', events: f.events.map(eventOf) };
  }
  if (f.type === 'inbox' && typeof f.unread === 'number')
    return { type: 'inbox', unread: f.unread, ref };
  if (
    f.type === 'history' &&
    Array.isArray(f.events) &&
    (f.next === null || typeof f.next === 'string')
  ) {
    const events = f.events.filter(
      (e: InboxEvent) => e && typeof e.id === 'string' && typeof e.ts === 'number',
    );
    return { type: 'history', events, next: f.next, ref };
  }
  if (f.type === 'error') {
    const detail = errorDetail(f.error);
    if (detail) return { type: 'error', error: detail, ref };
  }
  return undefined;
}

// biome-ignore lint/suspicious/noExplicitAny: checks a parsed frame's fields
const isEvent = (e: any): boolean =>
  typeof e === 'object' &&
  e !== null &&
  typeof e.id === 'string' &&
  e.id !== '' &&
  typeof e.ts === 'number';

/** The event a listener gets: its envelope's fields, `topic` only when the frame has one. */
// biome-ignore lint/suspicious/noExplicitAny: a frame's event, checked by isEvent
const eventOf = (e: any): HeraldEvent =>
  typeof e.topic === 'string'
    ? { id: e.id, ts: e.ts, topic: e.topic, payload: e.payload }
    : { id: e.id, ts: e.ts, payload: e.payload };

/**
 * Hands each event of an `event` or `events` frame to the listeners, in order, but for those whose
 * id `recent` holds (redeliveries), and returns the ack answering the frame: `{id}` for an `event`,
 * `{ids}` listing the ids of an `events` frame, duplicates too (the edge waits for them). Stops
 * when `live` turns false (a listener closed the connection): the events not handed over are not
 * acked, so the edge keeps them queued.
 */
export function deliver(
  frame: Extract<ServerFrame, { type: 'event' | 'events' }>,
  recent: RecentIds,
  listeners: { emit(payload: unknown, event: HeraldEvent): void },
  live: () => boolean,
): string {
  const ids: string[] = [];
  for (const e of frame.type === 'event' ? [frame] : frame.events) {
    if (!live()) break;
    ids.push(e.id);
    if (recent.has(e.id)) continue;
    recent.add(e.id);
    listeners.emit(e.payload, eventOf(e));
  }
  return JSON.stringify(
    frame.type === 'event' ? { type: 'ack', id: frame.id } : { type: 'ack', ids },
  );
}

/** `{code, message, field?}` from a frame, a close reason or a response body. */
export function errorDetail(value: unknown): ErrorDetail | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const { code, message, field } = value as Record<string, unknown>;
  if (typeof code !== 'string') return undefined;
  return {
    code,
    message: typeof message === 'string' ? message : code,
    field: typeof field === 'string' ? field : undefined,
  };
}

/**
 * The error of a socket the edge closed with a Herald code (4000 + HTTP status): the error frame
 * when one came, else the close reason `{"code":"..."}`. The reason's `retry_after` (seconds, the
 * refusal's Retry-After, which a browser cannot read from the upgrade) becomes `retryAfter`.
 */
export function closeError(
  detail: ErrorDetail | undefined,
  closeCode: number,
  reason: string,
): HeraldError {
  // biome-ignore lint/suspicious/noExplicitAny: checked field by field below
  let r: any;
  try {
    r = JSON.parse(reason);
  } catch {
    // Not JSON: no code, no hint.
  }
  const d = detail ?? errorDetail(r);
  const wait = r?.retry_after;
  return new HeraldError(
    d?.code ?? 'unexpected_response',
    d?.message ?? `socket closed with code ${closeCode}`,
    {
      field: d?.field,
      closeCode,
      retryAfter: typeof wait === 'number' && wait >= 0 ? wait : undefined,
    },
  );
}
