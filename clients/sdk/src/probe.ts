/**
 * What one plain HTTP request to a socket URL says about a socket that failed before opening:
 * `wrong_endpoint`, a readable answer that is not a Herald edge's; `unverified`, an answer whose
 * status this page may not read (cross-origin, without CORS), so nothing is known but that a host
 * answered; `network`, no answer, or a Herald edge's own (it is up: the failure was transient).
 */
export type ProbeResult = 'wrong_endpoint' | 'unverified' | 'network';

/** How long the probe may take; a slower answer counts as no answer (network). */
const PROBE_TIMEOUT_MS = 5000;

/**
 * A WebSocket that fails before opening tells nothing (browsers hide the HTTP status), so the
 * socket URL is asked once over HTTP, without the query (it holds the key) and without
 * credentials. socket-edge answers a plain GET of its connect path with 400, readable from any
 * page (`Access-Control-Allow-Origin: *`), and so does ingress-api's 404; any other readable
 * status (404 from another server, a 200 page) is not a Herald socket endpoint.
 *
 * The request is made with CORS first, so a browser can read those statuses cross-origin. When
 * that fails (no CORS on the answer, or no answer at all: a browser does not say which), it is made
 * again with `no-cors`: an opaque answer means a host answered whose status cannot be read, such
 * as a proxy's 502 while the edge behind it restarts, so the socket is retried (`unverified`),
 * never given up on; no answer (DNS, TCP, TLS) is a network failure.
 */
export async function probeSocketUrl(
  socketUrl: string,
  fetchImpl: typeof fetch | undefined,
  cancel: AbortSignal,
): Promise<ProbeResult> {
  const f = fetchImpl ?? (typeof fetch === 'function' ? fetch : undefined);
  if (!f) return 'network';
  const url = new URL(socketUrl);
  url.search = '';
  url.protocol = url.protocol === 'ws:' ? 'http:' : 'https:';
  const abort = new AbortController();
  const timer = setTimeout(() => abort.abort(), PROBE_TIMEOUT_MS);
  const onCancel = () => {
    clearTimeout(timer);
    abort.abort();
  };
  cancel.addEventListener('abort', onCancel);
  // no-cors requires redirect 'follow' (the default): anything else is a TypeError before any request.
  const ask = async (mode: RequestMode) => {
    const res = await f(url.href, {
      mode,
      cache: 'no-store',
      credentials: 'omit',
      signal: abort.signal,
    });
    void res.body?.cancel().catch(() => undefined);
    return res;
  };
  try {
    const res = await ask('cors').catch((err: unknown) => {
      if (abort.signal.aborted) throw err;
      return ask('no-cors');
    });
    if (res.type === 'opaque') return 'unverified';
    return res.status === 400 || res.status === 426 || res.status >= 500
      ? 'network'
      : 'wrong_endpoint';
  } catch {
    return 'network';
  } finally {
    clearTimeout(timer);
    cancel.removeEventListener('abort', onCancel);
  }
}
