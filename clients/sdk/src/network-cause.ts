/**
 * Why a request or socket got no answer, in words that say what to do. Node gives the cause
 * (undici's `fetch failed` carries it in `cause`, `ws` in its error event's `error`); browsers
 * give nothing, and then these functions answer undefined and the caller keeps its generic text.
 */

/** The part of a Node network error worth showing: its code and its own message. */
export interface NetworkCause {
  code: string | undefined;
  message: string;
}

/** Certificate chains Node could not verify against its trusted CAs. */
const UNTRUSTED = new Set([
  'SELF_SIGNED_CERT_IN_CHAIN',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'CERT_UNTRUSTED',
]);
/** A certificate that verified, but not for this host or not now. */
const MISFIT = new Set(['ERR_TLS_CERT_ALTNAME_INVALID', 'CERT_HAS_EXPIRED', 'CERT_NOT_YET_VALID']);
/** The peer closed the connection without a word: what a TLS listener does to plain HTTP. */
const HUNG_UP = new Set(['ECONNRESET', 'UND_ERR_SOCKET', 'EPIPE']);

/** How long the check that a plain URL's port speaks TLS may take. */
const TLS_CHECK_TIMEOUT_MS = 3000;

/**
 * The innermost error with a code (or, failing that, a message other than the wrapper's) in
 * `err`'s `cause` / `error` chain; undefined when there is none (a browser's bare TypeError).
 */
export function networkCause(err: unknown): NetworkCause | undefined {
  let found: NetworkCause | undefined;
  let at: unknown = err;
  for (let depth = 0; depth < 6 && typeof at === 'object' && at !== null; depth++) {
    const e = at as { code?: unknown; message?: unknown; cause?: unknown; error?: unknown };
    const code = typeof e.code === 'string' ? e.code : undefined;
    const message = typeof e.message === 'string' ? e.message : '';
    if (code !== undefined || (depth > 0 && message !== '')) found = { code, message };
    at = e.cause ?? e.error;
  }
  return found;
}

/**
 * A sentence naming what went wrong reaching `url` and how to fix it, or undefined when nothing
 * is known (the caller's generic text stands). A plain `http:`/`ws:` URL whose connection was
 * hung up on is checked once over TLS: a port that speaks it is named, with the scheme to use.
 */
export async function explainNetworkFailure(
  url: string,
  err: unknown,
  fetchImpl: typeof fetch | undefined,
): Promise<string | undefined> {
  const cause = networkCause(err);
  if (!cause) return undefined;
  const target = new URL(url);
  const host = target.host;
  const said = describe(cause);
  const code = cause.code ?? '';
  if (UNTRUSTED.has(code)) {
    return `${host}'s TLS certificate is not trusted here (${said}): trust the CA that issued it. For make dev's local CA, start Node with NODE_EXTRA_CA_CERTS=.data/tls/ca.crt, or pass options.fetch and options.WebSocket that trust it`;
  }
  if (MISFIT.has(code)) {
    return `${host}'s TLS certificate does not fit this URL (${said}): use the host name the certificate names, or renew it`;
  }
  if (code === 'ERR_SSL_WRONG_VERSION_NUMBER' || /wrong version number/i.test(cause.message)) {
    return `${host} does not speak TLS (${said}): it is a plain HTTP port, not one of Herald's`;
  }
  const plain = target.protocol === 'http:' || target.protocol === 'ws:';
  if (plain && (HUNG_UP.has(code) || /socket hang up|other side closed/i.test(cause.message))) {
    const secure = target.protocol === 'ws:' ? 'wss:' : 'https:';
    if (await speaksTls(target, fetchImpl)) {
      return `${host} speaks TLS, and ${target.protocol}// is plain (${said}): use ${secure}//${host}`;
    }
  }
  if (code === 'ECONNREFUSED') {
    return `nothing listens on ${host} (${said}): start the service, or correct the port`;
  }
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') {
    return `the host name ${target.hostname} does not resolve (${said})`;
  }
  return said;
}

function describe(cause: NetworkCause): string {
  if (cause.code === undefined || cause.message.includes(cause.code)) return cause.message;
  return cause.message === '' ? cause.code : `${cause.message}, ${cause.code}`;
}

/**
 * Whether the port of a plain URL answers TLS: any HTTPS answer, or a certificate complaint
 * (a handshake happened), says so.
 */
async function speaksTls(plain: URL, fetchImpl: typeof fetch | undefined): Promise<boolean> {
  const f = fetchImpl ?? (typeof fetch === 'function' ? fetch : undefined);
  if (!f) return false;
  const secure = new URL(plain.href);
  secure.protocol = 'https:';
  secure.pathname = '/healthz';
  secure.search = '';
  const abort = new AbortController();
  const timer = setTimeout(() => abort.abort(), TLS_CHECK_TIMEOUT_MS);
  try {
    const res = await f(secure.href, { signal: abort.signal, credentials: 'omit' });
    void res.body?.cancel().catch(() => undefined);
    return true;
  } catch (err) {
    const code = networkCause(err)?.code ?? '';
    return UNTRUSTED.has(code) || MISFIT.has(code);
  } finally {
    clearTimeout(timer);
  }
}
