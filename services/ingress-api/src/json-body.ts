import { isUtf8 } from 'node:buffer';
import { HeraldError } from '@herald/proto';
import type { Span } from './raw-json.js';

const utf8 = new TextDecoder();

/**
 * The first check of every JSON body (a single dispatch's, a batch's): UTF-8, then JSON, scanned
 * once by `scanner`. A body that is neither gets the 400 `invalid_json` on field `body`, ending
 * with `shape`, what to send instead.
 */
export function scanOrRefuse<T>(
  body: Uint8Array,
  scanner: (body: Uint8Array) => T,
  shape: string,
): T {
  if (!isUtf8(body)) {
    throw new HeraldError(
      'invalid_json',
      'The body is not valid UTF-8: send JSON encoded as UTF-8',
      { field: 'body' },
    );
  }
  try {
    return scanner(body);
  } catch (err) {
    if (!(err instanceof SyntaxError)) throw err;
    // Only the position is echoed: quoting the body could echo the api_key.
    const at = /position (\d+)/.exec(err.message)?.[1];
    throw new HeraldError(
      'invalid_json',
      `The body is not valid JSON${at === undefined ? '' : ` (at position ${at})`}: ${shape}`,
      { field: 'body' },
    );
  }
}

/** A small member's value, decoded from its bytes (for zod); undefined when absent. */
export function memberValue(
  body: Uint8Array,
  members: ReadonlyMap<string, Span>,
  name: string,
): unknown {
  const span = members.get(name);
  return span && JSON.parse(utf8.decode(body.subarray(span.start, span.end)));
}

/**
 * The payload's original JSON bytes (a view into the body: exactly what reaches the socket), or
 * the 413 `payload_too_large` past PAYLOAD_LIMIT_BYTES. `span` is known to be there: the request
 * was parsed with a payload present.
 */
export function payloadOf(
  body: Uint8Array,
  span: Span | undefined,
  limitBytes: number,
): Uint8Array {
  const payload = body.subarray(span?.start, span?.end);
  if (payload.byteLength > limitBytes) {
    throw new HeraldError(
      'payload_too_large',
      `payload is ${payload.byteLength} bytes of JSON but the limit is ${limitBytes} bytes: send a smaller payload (for example an id the recipient fetches)`,
      { field: 'payload' },
    );
  }
  return payload;
}
