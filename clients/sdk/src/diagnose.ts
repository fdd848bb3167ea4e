import { HeraldError } from './errors.js';
import { explainNetworkFailure } from './network-cause.js';
import { probeSocketUrl } from './probe.js';

/** What a socket that never opened tells: stop (a wrong URL), report once and retry, or nothing. */
export type Diagnosis = { stop: boolean; error: HeraldError } | undefined;

/**
 * What a connection knows of its current outage, to say why its sockets fail without saying it
 * on every retry: whether a socket was ever accepted (a URL that worked once is not a wrong one),
 * whether this outage's network failure was reported (once per outage, not once per retry), the
 * last failed socket's error event, and the probe in flight (one at a time).
 */
export class Outage {
  /** The error event of the last socket that failed, for what Node says of its cause. */
  failure: unknown;
  #everAccepted = false;
  #reported = false;
  #probe: AbortController | undefined;

  /** A socket was accepted: the URL is right, and the outage, if any, is over. */
  accepted(): void {
    this.#everAccepted = true;
    this.#reported = false;
  }

  /** Cancels the probe in flight (the connection closes), so no timer or request outlives it. */
  abort(): void {
    this.#probe?.abort();
  }

  /**
   * Finds out why a socket failed before opening: a URL that is not Herald's (stop, say so), the
   * network, or an answer the page may not read (keep retrying, say so once per outage). Nothing
   * while a probe runs, or once accepted and reported (nothing left to learn), or when `failing`
   * says the connection no longer retries by the time the probe answers. `url` holds the key: it
   * is probed, never logged or put in a message.
   */
  async explain(
    url: string,
    fetcher: typeof fetch | undefined,
    failing: () => boolean,
  ): Promise<Diagnosis> {
    // As they were when the socket failed: a retry may start while the probe runs.
    const { failure } = this;
    const everAccepted = this.#everAccepted;
    const reported = this.#reported;
    if (this.#probe || (everAccepted && reported)) return undefined;
    this.#probe = new AbortController();
    // Without the query: it holds the key.
    const endpoint = url.slice(0, url.indexOf('?'));
    let found: Diagnosis;
    const result = await probeSocketUrl(url, fetcher, this.#probe.signal);
    if (result === 'wrong_endpoint' && !everAccepted) {
      found = {
        stop: true,
        error: new HeraldError(
          'wrong_endpoint',
          `${endpoint} answered, but is not a Herald socket endpoint: set options.wsUrl to socket-edge's URL (make dev: wss://localhost:8444; options.baseUrl is ingress-api's)`,
          { field: 'wsUrl' },
        ),
      };
    } else if (reported) {
      found = undefined;
    } else if (result === 'network') {
      const why = await explainNetworkFailure(url, failure, fetcher);
      found = {
        stop: false,
        error: new HeraldError(
          'network_error',
          why === undefined
            ? `Could not reach ${new URL(url).host} (DNS, refused connection or TLS): retrying with backoff`
            : `Could not open a socket at ${endpoint}: ${why}. Retrying with backoff`,
          { field: 'wsUrl', cause: failure },
        ),
      };
    } else if (result === 'unverified') {
      // Something answered that this page may not read: a proxy before an edge that is restarting
      // looks the same as a wrong URL on another server, so the socket is retried, never given up.
      found = {
        stop: false,
        error: new HeraldError(
          'endpoint_unverified',
          `${endpoint} answered over HTTP, but not as a Herald socket endpoint this page can read (cross-origin, no CORS): retrying with backoff. If it persists, check that options.wsUrl is socket-edge's URL (make dev: wss://localhost:8444)`,
          { field: 'wsUrl' },
        ),
      };
    }
    this.#probe = undefined;
    if (!found || !failing()) return undefined;
    if (!found.stop) this.#reported = true;
    return found;
  }
}
