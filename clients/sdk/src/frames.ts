import { HeraldError } from './errors.js';
import type { InboxEvent } from './types.js';

export interface ErrorDetail {
  code: string;
  message: string;
  field?: string | undefined;
}

/**
 * The herald.v1 frames a client receives (proto's ServerFrame, checked by hand). `ref`: the inbox
 * request the frame answers.
 */
export type ServerFrame =
  | { type: 'event'; id: string; ts: number; payload: unknown }
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
  if (f.type === 'event' && typeof f.id === 'string' && f.id !== '' && typeof f.ts === 'number') {
    return { type: 'event', id: f.id, ts: f.ts, payload: f.payload };
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
 * when one came, else the close reason `{"code":"..."}`.
 */
export function closeError(
  detail: ErrorDetail | undefined,
  closeCode: number,
  reason: string,
): HeraldError {
  let d = detail;
  if (!d) {
    try {
      d = errorDetail(JSON.parse(reason));
    } catch {
      d = undefined;
    }
  }
  return new HeraldError(
    d?.code ?? 'unexpected_response',
    d?.message ?? `socket closed with code ${closeCode}`,
    {
      field: d?.field,
      closeCode,
    },
  );
}
