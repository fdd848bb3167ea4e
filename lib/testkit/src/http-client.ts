import https from 'node:https';

export interface HttpResult {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  /** Parsed JSON body, or the raw text when it is not JSON. */
  // biome-ignore lint/suspicious/noExplicitAny: tests read bodies field by field in assertions, which fail on a wrong shape.
  body: any;
  text: string;
}

export interface PostOptions {
  headers?: Record<string, string>;
  /** Raw body text; default JSON.stringify(body). */
  raw?: string;
  path?: string;
}

/** POSTs to the stack's ingress over TLS (trusting the test CA). */
export function post(
  baseUrl: string,
  ca: string,
  body: unknown,
  opts: PostOptions = {},
): Promise<HttpResult> {
  const url = new URL(opts.path ?? '/notify', baseUrl).toString();
  const raw = opts.raw ?? JSON.stringify(body);
  return send('POST', url, ca, raw, { 'content-type': 'application/json', ...opts.headers });
}

/** Plain GET (ops endpoints). */
export function get(baseUrl: string, ca: string, path: string): Promise<HttpResult> {
  return send('GET', new URL(path, baseUrl).toString(), ca, '', {});
}

/** Any JSON request over TLS (the account API): method, path, body, headers. */
export function request(
  method: string,
  url: string,
  ca: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<HttpResult> {
  const data = body === undefined ? '' : JSON.stringify(body);
  return send(method, url, ca, data, {
    ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    ...headers,
  });
}

function send(
  method: string,
  url: string,
  ca: string,
  data: string,
  headers: Record<string, string>,
): Promise<HttpResult> {
  return new Promise((resolve, reject) => {
    const req = https.request(
      url,
      { method, ca, headers: { 'content-length': Buffer.byteLength(data), ...headers } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let parsed: unknown = text;
          try {
            parsed = JSON.parse(text);
          } catch {
            // Not JSON: the test decides whether that is a failure.
          }
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body: parsed, text });
        });
      },
    );
    req.on('error', reject);
    req.end(data);
  });
}
