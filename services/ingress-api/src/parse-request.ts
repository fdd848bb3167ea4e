import { HeraldError, type NotifyRequest, parseNotifyRequest } from '@herald/proto';
import { extractMember } from './raw-json.js';

export interface ParsedDispatch {
  request: NotifyRequest;
  /** The payload's original JSON text, UTF-8 encoded: exactly what reaches the socket. */
  payload: Uint8Array;
}

const SHAPE = 'send a JSON object with recipient, payload, api_key and client';

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** Decodes a body's bytes, refusing invalid UTF-8 instead of replacing it (it would alter the payload). */
export function decodeBody(bytes: Uint8Array): string {
  try {
    return utf8.decode(bytes);
  } catch {
    throw new HeraldError(
      'invalid_json',
      'The body is not valid UTF-8: send JSON encoded as UTF-8',
      { field: 'body' },
    );
  }
}

/**
 * Validates a raw dispatch body and cuts the payload's original text out of it. Throws the
 * HeraldError naming the field at fault.
 */
export function parseDispatchBody(raw: string, payloadLimitBytes: number): ParsedDispatch {
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch (err) {
    // Only the position is echoed: V8's message may quote the body, which holds the api_key.
    const at = /position (\d+)/.exec(String(err))?.[1];
    throw new HeraldError(
      'invalid_json',
      `The body is not valid JSON${at === undefined ? '' : ` (at position ${at})`}: ${SHAPE}`,
      {
        field: 'body',
      },
    );
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new HeraldError(
      'invalid_json',
      `The body must be a JSON object, not ${kindOf(parsed)}: ${SHAPE}`,
      {
        field: 'body',
      },
    );
  }
  const request = parseNotifyRequest(parsed);
  const text = extractMember(raw, 'payload');
  // JSON.parse accepted the body and parseNotifyRequest found a payload, so the scanner must too.
  if (text === undefined)
    throw new Error('payload present after JSON.parse but not found by the scanner');
  const payload = new TextEncoder().encode(text);
  if (payload.byteLength > payloadLimitBytes) {
    throw new HeraldError(
      'payload_too_large',
      `payload is ${payload.byteLength} bytes of JSON but the limit is ${payloadLimitBytes} bytes: send a smaller payload (for example an id the recipient fetches)`,
      { field: 'payload' },
    );
  }
  return { request, payload };
}

function kindOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return `a ${typeof value}`;
}
