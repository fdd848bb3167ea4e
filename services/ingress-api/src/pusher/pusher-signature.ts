import { bodyMd5Digest, hexEqual, requestDigest, stringsEqual } from '@herald/access';
import { HeraldError } from '@herald/proto';

/**
 * The Pusher HTTP API's request signature (issue 41), checked exactly as Pusher signs it: the
 * query's `auth_key` is the app's key, `auth_timestamp` within the skew of now, `auth_version`
 * 1.0, `body_md5` the hex MD5 of a non-empty body (and, if sent with an empty one, of that), and
 * `auth_signature` the hex HMAC-SHA256 with the app's secret of `POST\n<path>\n<query>`, the
 * query being every other parameter, sorted. Every refusal is 401, its message Pusher-style plain
 * text naming the parameter; nothing in it is secret (the string to sign is the request's own).
 */

export interface SignedRequest {
  method: string;
  /** The path exactly as received (what the client signed), e.g. `/apps/123/events`. */
  path: string;
  /** The query's parameters, decoded; a repeated one is refused before this. */
  params: Record<string, string>;
  body: Uint8Array;
}

/**
 * Parses a raw query string; a parameter given twice is refused (its signature is ambiguous). A
 * query with no `%` or `+` (what the `pusher` libraries send: hex, digits, the key) is split as
 * it is; any other is decoded by URLSearchParams, as a browser would.
 */
export function queryParams(rawQuery: string): Record<string, string> {
  const params: Record<string, string> = {};
  const add = (name: string, value: string) => {
    if (Object.hasOwn(params, name)) {
      throw refusal(`Duplicate query parameter ${name}: send each parameter once`, name);
    }
    params[name] = value;
  };
  if (rawQuery.includes('%') || rawQuery.includes('+')) {
    for (const [name, value] of new URLSearchParams(rawQuery)) add(name, value);
    return params;
  }
  for (const part of rawQuery.split('&')) {
    if (part === '') continue;
    const eq = part.indexOf('=');
    if (eq < 0) add(part, '');
    else add(part.slice(0, eq), part.slice(eq + 1));
  }
  return params;
}

export function checkSignature(
  req: SignedRequest,
  app: { key: string; secret: string },
  nowS: number,
  skewS: number,
): void {
  const p = req.params;
  const key = p.auth_key;
  if (key === undefined || key === '') {
    throw refusal(
      'Missing auth_key: sign the request with your app key, secret and id',
      'auth_key',
    );
  }
  if (!stringsEqual(key, app.key)) {
    throw refusal(
      "Invalid auth_key: it is not this app's key; use the key, secret and id of one app",
      'auth_key',
    );
  }
  if (p.auth_version !== '1.0') {
    throw refusal(
      `Invalid auth_version${p.auth_version === undefined ? ' (missing)' : ` ${JSON.stringify(p.auth_version)}`}: only 1.0 is supported`,
      'auth_version',
    );
  }
  checkTimestamp(p.auth_timestamp, nowS, skewS);
  checkBodyMd5(p.body_md5, req.body);
  const sent = p.auth_signature;
  if (sent === undefined || sent === '') {
    throw refusal(
      'Missing auth_signature: sign the request with your app secret',
      'auth_signature',
    );
  }
  if (!hexEqual(sent, requestDigest(app.secret, req.method, req.path, p))) {
    throw refusal(
      `Invalid signature: you should have sent HmacSHA256Hex(${JSON.stringify(stringToSign(req))}, your_secret_key), but you sent ${JSON.stringify(sent)}`,
      'auth_signature',
    );
  }
}

function checkTimestamp(raw: string | undefined, nowS: number, skewS: number): void {
  if (raw === undefined || !/^[0-9]{1,12}$/.test(raw)) {
    throw refusal(
      `Invalid auth_timestamp${raw === undefined ? ' (missing)' : ` ${JSON.stringify(raw)}`}: send the time in whole seconds since the epoch`,
      'auth_timestamp',
    );
  }
  const ts = Number(raw);
  if (Math.abs(nowS - ts) > skewS) {
    throw refusal(
      `Timestamp expired: given timestamp ${ts} is not within ${skewS}s of the server time ${Math.floor(nowS)}; check your server's clock`,
      'auth_timestamp',
    );
  }
}

function checkBodyMd5(sent: string | undefined, body: Uint8Array): void {
  if (sent === undefined) {
    if (body.byteLength > 0) {
      throw refusal(
        'Missing body_md5: a POST with a body must send the hex MD5 of the body as body_md5',
        'body_md5',
      );
    }
    return;
  }
  if (!hexEqual(sent, bodyMd5Digest(body))) {
    throw refusal(
      'Invalid body_md5: it is not the MD5 of the body received; sign the body you send, unchanged',
      'body_md5',
    );
  }
}

/** What the client should have signed, as Pusher's refusal shows it. */
function stringToSign(req: SignedRequest): string {
  const query = Object.keys(req.params)
    .filter((k) => k !== 'auth_signature')
    .map((k) => [k.toLowerCase(), req.params[k] ?? ''] as const)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([k, v]) => `${k}=${v}`)
    .join('&');
  return `${req.method.toUpperCase()}\n${req.path}\n${query}`;
}

function refusal(message: string, field: string): HeraldError {
  return new HeraldError('invalid_api_key', message, { field });
}
