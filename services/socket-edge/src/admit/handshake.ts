import type http from 'node:http';
import { CONNECT_PATH, HeraldError } from '@herald/proto';

/*
 * ws checks a handshake too (in `handleUpgrade`), but only after Herald has authenticated the
 * connect, and it refuses a bad one in text/html with no field named, whatever the framing. The
 * contract promises every refusal as the JSON error shape, naming the header at fault, over HTTP
 * (no WebSocket can open on a bad handshake), and a bad handshake should cost no key lookup. So
 * the edge checks the handshake first, exactly as strictly as ws would (what ws accepts passes,
 * what it refuses is refused here), and ws's own check never fires on a connect that reached it.
 */

/** A Sec-WebSocket-Key: the base64 of 16 bytes (RFC 6455 §4.1), as ws accepts it. */
const WEBSOCKET_KEY = /^[+/0-9A-Za-z]{22}==$/;

/**
 * The handshake checks ws would otherwise answer itself in text/html (RFC 6455 §4.2.1), as the
 * JSON error to refuse with; undefined when the handshake is well formed. Never echoes a value.
 */
export function handshakeError(req: http.IncomingMessage): HeraldError | undefined {
  if (req.method !== 'GET') {
    return new HeraldError(
      'method_not_allowed',
      `A WebSocket connect is a GET upgrade: send GET ${CONNECT_PATH}, not ${safeMethod(req.method)}`,
      { field: 'method' },
    );
  }
  if ((req.headers.upgrade ?? '').toLowerCase() !== 'websocket') {
    return new HeraldError('invalid_field', 'Upgrade must be "websocket": open a WebSocket', {
      field: 'Upgrade',
    });
  }
  if (!WEBSOCKET_KEY.test(req.headers['sec-websocket-key'] ?? '')) {
    return new HeraldError(
      'invalid_field',
      'Sec-WebSocket-Key must be the base64 of 16 random bytes (RFC 6455): use a WebSocket client',
      { field: 'Sec-WebSocket-Key' },
    );
  }
  const protocols = req.headers['sec-websocket-protocol'];
  if (protocols !== undefined && !isProtocolList(protocols)) {
    return new HeraldError(
      'invalid_field',
      'Sec-WebSocket-Protocol must be a comma-separated list of distinct tokens: offer herald.v1, or nothing for plain framing',
      { field: 'Sec-WebSocket-Protocol' },
    );
  }
  if (req.headers['sec-websocket-version'] !== '13') {
    return new HeraldError(
      'invalid_field',
      'Sec-WebSocket-Version must be 13 (RFC 6455): use a WebSocket client',
      { field: 'Sec-WebSocket-Version' },
    );
  }
  return undefined;
}

/** An HTTP token (RFC 9110 §5.6.2): what a subprotocol name is. */
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

/**
 * Whether a Sec-WebSocket-Protocol value is what ws's own parser accepts: distinct tokens
 * separated by commas, spaces or tabs around the commas only.
 */
function isProtocolList(header: string): boolean {
  if (/^[ \t]|[ \t]$/.test(header)) return false;
  const seen = new Set<string>();
  for (const part of header.split(',')) {
    const name = part.replace(/^[ \t]+|[ \t]+$/g, '');
    if (!TOKEN.test(name) || seen.has(name)) return false;
    seen.add(name);
  }
  return true;
}

/** The request's method for a message: Node's parser only lets token characters through. */
function safeMethod(method: string | undefined): string {
  return /^[A-Z]{1,16}$/.test(method ?? '') ? (method as string) : 'another method';
}
