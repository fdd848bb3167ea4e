/** What one plain HTTP request to a socket URL says about a socket that failed before opening. */
export type ProbeResult = 'wrong_endpoint' | 'network';

/** How long the probe may take; a slower answer counts as no answer (network). */
const PROBE_TIMEOUT_MS = 5000;

/**
 * A WebSocket that fails before opening tells nothing (browsers hide the HTTP status), so the
 * socket URL is asked once over HTTP, without the query (it holds the key). socket-edge answers a
 * plain GET of its connect path with 400; anything else that answers (404 from ingress-api or
 * another server, any page) is not a Herald socket endpoint. Browsers cannot read a cross-origin
 * status (`no-cors` gives an opaque answer): an answer at all then means the host is up but
 * refused the upgrade, which a Herald edge never does for herald.v1 (it accepts and closes with a
 * code). No answer (DNS, TCP, TLS) is a network failure.
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
  try {
    const res = await f(url.href, {
      mode: 'no-cors',
      cache: 'no-store',
      credentials: 'omit',
      // no-cors requires redirect 'follow': anything else is a TypeError before any request.
      signal: abort.signal,
    });
    void res.body?.cancel().catch(() => undefined);
    if (res.type === 'opaque') return 'wrong_endpoint';
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
