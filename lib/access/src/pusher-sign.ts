import { createHash, createHmac, hash, timingSafeEqual } from 'node:crypto';
import { isUuidV4, type PusherUserIds } from '@herald/proto';

/**
 * Pusher's signatures (issue 41), checked by the edge (channel authorisation, user sign-in) and
 * ingress (the HTTP API), and the mapping of a Pusher user id onto a recipient. Every comparison
 * is constant time.
 */

const hmacHex = (secret: string, text: string) =>
  createHmac('sha256', secret).update(text, 'utf8').digest('hex');

/**
 * Constant-time equality of a hex string someone sent and the digest it should spell (any case;
 * false at once for a wrong length or a character that is not hex, which `Buffer.from` stops at).
 */
export function hexEqual(sentHex: string, digest: Buffer): boolean {
  if (sentHex.length !== digest.length * 2) return false;
  const sent = Buffer.from(sentHex, 'hex');
  return sent.length === digest.length && timingSafeEqual(sent, digest);
}

/** Constant-time equality of two strings (false at once for different lengths). */
export function stringsEqual(a: string, b: string): boolean {
  const x = Buffer.from(a, 'utf8');
  const y = Buffer.from(b, 'utf8');
  return x.length === y.length && timingSafeEqual(x, y);
}

/**
 * A `pusher:subscribe`'s `auth` for a `private-`/`private-encrypted-` channel (no `channel_data`)
 * or a `presence-` one: `<key>:` + hex HMAC-SHA256(secret, `socket_id:channel[:channel_data]`).
 */
export function channelAuthOk(
  app: { key: string; secret: string },
  socketId: string,
  channel: string,
  auth: string,
  channelData?: string,
): boolean {
  const text =
    channelData === undefined ? `${socketId}:${channel}` : `${socketId}:${channel}:${channelData}`;
  return stringsEqual(auth, `${app.key}:${hmacHex(app.secret, text)}`);
}

/** A `pusher:signin`'s `auth`: `<key>:` + hex HMAC-SHA256(secret, `socket_id::user::user_data`). */
export function userAuthOk(
  app: { key: string; secret: string },
  socketId: string,
  userData: string,
  auth: string,
): boolean {
  return stringsEqual(auth, `${app.key}:${hmacHex(app.secret, `${socketId}::user::${userData}`)}`);
}

/**
 * The HTTP API's `auth_signature`: hex HMAC-SHA256(secret, `METHOD\nPATH\nQUERY`), QUERY being
 * every parameter but `auth_signature`, keys lower-cased, sorted, `k=v` joined by `&` (values as
 * they were decoded, the way the `pusher` library signs them).
 */
export function requestSignature(
  secret: string,
  method: string,
  path: string,
  params: Record<string, string>,
): string {
  return requestDigest(secret, method, path, params).toString('hex');
}

/** {@link requestSignature} as the digest's bytes, for {@link hexEqual}. */
export function requestDigest(
  secret: string,
  method: string,
  path: string,
  params: Record<string, string>,
): Buffer {
  return createHmac('sha256', secret)
    .update(`${method.toUpperCase()}\n${path}\n${signedQuery(params)}`, 'utf8')
    .digest();
}

/**
 * The query as signed: every parameter but `auth_signature`, keys lower-cased, sorted (by UTF-16
 * code unit, as `<` compares), `k=v` joined by `&`. Built without intermediate arrays of pairs:
 * it is on every signed API request.
 */
function signedQuery(params: Record<string, string>): string {
  const keys: string[] = [];
  const byLower: Record<string, string> = Object.create(null);
  for (const k in params) {
    if (k === 'auth_signature') continue;
    const lower = k.toLowerCase();
    // Two keys that lower-case alike keep both (as before), in their sort order.
    if (lower in byLower) return signedQuerySlow(params);
    byLower[lower] = params[k] ?? '';
    keys.push(lower);
  }
  keys.sort();
  let query = '';
  for (const k of keys) query = query === '' ? `${k}=${byLower[k]}` : `${query}&${k}=${byLower[k]}`;
  return query;
}

function signedQuerySlow(params: Record<string, string>): string {
  return Object.keys(params)
    .filter((k) => k !== 'auth_signature')
    .map((k) => [k.toLowerCase(), params[k] ?? ''] as const)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([k, v]) => `${k}=${v}`)
    .join('&');
}

/** Hex MD5 of a request body, what `body_md5` must be. */
export function bodyMd5(body: Uint8Array | string): string {
  return bodyMd5Digest(body).toString('hex');
}

/** {@link bodyMd5} as the digest's bytes, for {@link hexEqual}. */
export function bodyMd5Digest(body: Uint8Array | string): Buffer {
  // One-shot: no Hash object per request (measurable on every signed API request).
  return hash('md5', body, 'buffer');
}

/**
 * A Pusher user id's recipient. `uuid`: the id must be a UUID v4 (any case), the recipient is it
 * lower-cased. `any`: the first 16 bytes of SHA-256(`herald-pusher:<app_id>:<user id>`) with the
 * v4 version and RFC 4122 variant bits set, so Laravel's integer ids get a stable recipient that
 * `/notify` and the SDK can name too. Undefined when a `uuid` app gets an id that is not one.
 */
export function pusherRecipient(
  appId: string,
  userId: string,
  mode: PusherUserIds,
): string | undefined {
  if (mode === 'uuid') {
    return isUuidV4(userId) ? userId.toLowerCase() : undefined;
  }
  const b = createHash('sha256').update(`herald-pusher:${appId}:${userId}`, 'utf8').digest();
  b[6] = ((b[6] ?? 0) & 0x0f) | 0x40;
  b[8] = ((b[8] ?? 0) & 0x3f) | 0x80;
  const h = b.subarray(0, 16).toString('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}
