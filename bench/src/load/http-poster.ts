import { Pool } from 'undici';

export interface PostResult {
  status: number;
  text: string;
  /** The answer's headers, as undici gives them (names lower-case). */
  headers?: Record<string, string | string[] | undefined>;
}

export interface Poster {
  post(path: string, body: string): Promise<PostResult>;
  /** The same with another method (figure 10's `PUT /topics/{topic}/members`). */
  send(method: 'POST' | 'PUT' | 'DELETE', path: string, body: string): Promise<PostResult>;
  /**
   * Opens every connection of the pool (one GET /readyz on each, at once). Node servers close a
   * keep-alive connection idle for 5 s, so a window that starts after a pause would otherwise pay
   * for fresh TLS handshakes inside its measurement; every server gets the same treatment.
   */
  warm(): Promise<void>;
  close(): Promise<void>;
}

/**
 * The one HTTP client every HTTP scenario uses (Herald's POST /notify and the baselines' POST
 * /push alike): undici keep-alive connections over TLS trusting the run's CA, one request per
 * connection at a time (no pipelining, which ingress would not expect from real senders).
 */
export function poster(
  origin: string,
  ca: string,
  connections: number,
  /** Sent with every POST: Centrifugo's server API takes its key as `X-API-Key`. */
  headers: Record<string, string> = {},
): Poster {
  const pool = new Pool(origin, {
    connections,
    pipelining: 1,
    connect: { ca, rejectUnauthorized: true },
    keepAliveTimeout: 60_000,
  });
  const send: Poster['send'] = async (method, path, body) => {
    const res = await pool.request({
      method,
      path,
      headers: { 'content-type': 'application/json', ...headers },
      body,
    });
    return { status: res.statusCode, text: await res.body.text(), headers: res.headers };
  };
  return {
    post: (path, body) => send('POST', path, body),
    send,
    async warm() {
      await Promise.all(
        Array.from({ length: connections }, async () => {
          const res = await pool.request({ method: 'GET', path: '/readyz' });
          await res.body.dump();
        }),
      );
    },
    close: () => pool.close(),
  };
}
