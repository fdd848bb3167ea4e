import { HeraldError } from './errors.js';
import { explainNetworkFailure } from './network-cause.js';
import { probeSocketUrl } from './probe.js';

/** What a socket that never opened tells: stop (a wrong URL), report once and retry, or nothing. */
export type Diagnosis = { stop: boolean; error: HeraldError } | undefined;

/**
 * Finds out why a socket failed before opening: a URL that is not Herald's (stop, say so), the
 * network, or an answer the page may not read (keep retrying, say so once per outage). `url`
 * holds the key: it is probed, never logged or put in a message.
 */
export async function diagnose(
  url: string,
  failure: unknown,
  state: { everAccepted: boolean; networkReported: boolean },
  fetcher: typeof fetch | undefined,
  signal: AbortSignal,
): Promise<Diagnosis> {
  // Without the query: it holds the key.
  const endpoint = url.slice(0, url.indexOf('?'));
  const result = await probeSocketUrl(url, fetcher, signal);
  if (result === 'wrong_endpoint' && !state.everAccepted) {
    return {
      stop: true,
      error: new HeraldError(
        'wrong_endpoint',
        `${endpoint} answered, but is not a Herald socket endpoint: set options.wsUrl to socket-edge's URL (make dev: wss://localhost:8444; options.baseUrl is ingress-api's)`,
        { field: 'wsUrl' },
      ),
    };
  }
  if (state.networkReported) return undefined;
  if (result === 'network') {
    const why = await explainNetworkFailure(url, failure, fetcher);
    return {
      stop: false,
      error: new HeraldError(
        'network_error',
        why === undefined
          ? `Could not reach ${new URL(url).host} (DNS, refused connection or TLS): retrying with backoff`
          : `Could not open a socket at ${endpoint}: ${why}. Retrying with backoff`,
        { field: 'wsUrl', cause: failure },
      ),
    };
  }
  // Something answered that this page may not read: a proxy before an edge that is restarting
  // looks the same as a wrong URL on another server, so the socket is retried, never given up.
  if (result === 'unverified') {
    return {
      stop: false,
      error: new HeraldError(
        'endpoint_unverified',
        `${endpoint} answered over HTTP, but not as a Herald socket endpoint this page can read (cross-origin, no CORS): retrying with backoff. If it persists, check that options.wsUrl is socket-edge's URL (make dev: wss://localhost:8444)`,
        { field: 'wsUrl' },
      ),
    };
  }
  return undefined;
}
