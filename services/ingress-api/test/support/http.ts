import http from 'node:http';
import https from 'node:https';

export interface Reply {
  status: number;
  headers: http.IncomingHttpHeaders;
  /** Parsed JSON body (undefined when the body is not JSON). */
  // biome-ignore lint/suspicious/noExplicitAny: tests assert on many body shapes; expect() checks them
  json: any;
  text: string;
}

export interface RequestOptions {
  method?: string;
  path?: string;
  /** Extra headers; undefined removes a default one (content-length, to send a chunked body). */
  headers?: Record<string, string | undefined>;
  /** A string or Buffer is sent as is; anything else is JSON.stringify'd. */
  body?: unknown;
  /** Trust this CA (https base URLs). */
  ca?: string;
  /** Send from this local address (any of 127.0.0.0/8 on Linux), to appear as another source. */
  localAddress?: string;
  /** A keep-alive agent, to send several requests over one connection; default a new connection. */
  agent?: http.Agent;
}

/** One HTTP(S) request over a real socket, with full control of method, headers and raw body. */
export function request(baseUrl: string, opts: RequestOptions = {}): Promise<Reply> {
  const url = new URL(opts.path ?? '/notify', baseUrl);
  const data =
    opts.body === undefined
      ? undefined
      : typeof opts.body === 'string' || Buffer.isBuffer(opts.body)
        ? opts.body
        : JSON.stringify(opts.body);
  const client = url.protocol === 'https:' ? https : http;
  const headers: Record<string, string | number | undefined> = {
    ...(data === undefined
      ? {}
      : { 'content-type': 'application/json', 'content-length': Buffer.byteLength(data) }),
    ...opts.headers,
  };
  for (const [name, value] of Object.entries(headers))
    if (value === undefined) delete headers[name];
  return new Promise((resolve, reject) => {
    const req = client.request(
      url,
      {
        method: opts.method ?? 'POST',
        agent: opts.agent ?? false,
        ...(opts.ca ? { ca: opts.ca } : {}),
        ...(opts.localAddress ? { localAddress: opts.localAddress } : {}),
        headers,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let json: unknown;
          try {
            json = JSON.parse(text);
          } catch {
            json = undefined;
          }
          resolve({ status: res.statusCode ?? 0, headers: res.headers, json, text });
        });
      },
    );
    req.on('error', reject);
    req.end(data);
  });
}
