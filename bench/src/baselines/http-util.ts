import { readFileSync } from 'node:fs';
import type http from 'node:http';
import https from 'node:https';

/**
 * What every baseline server shares with Herald's listeners: the same certificate through the
 * same `https.createServer` defaults (kit's createServer), the same body handling a hand-written
 * Node server would have, and env-only configuration.
 */
export interface BaselineEnv {
  port: number;
  host: string;
  certFile: string;
  keyFile: string;
  heartbeatMs: number;
  natsUrl: string | undefined;
  /** NATS_USER / NATS_PASSWORD, when the server asks for a login. */
  natsLogin: { user?: string; pass?: string };
}

export function baselineEnv(env: Record<string, string | undefined> = process.env): BaselineEnv {
  const need = (name: string) => {
    const v = env[name];
    if (!v) throw new Error(`${name} is required (the bench runner sets it)`);
    return v;
  };
  const port = Number(env.PORT ?? '0');
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw new Error(`PORT must be an integer 0..65535, got ${env.PORT}`);
  }
  return {
    port,
    host: env.HOST ?? '127.0.0.1',
    certFile: need('TLS_CERT_FILE'),
    keyFile: need('TLS_KEY_FILE'),
    // The edge's default heartbeat, so idle sockets cost the same timers on every server.
    heartbeatMs: Number(env.HEARTBEAT_INTERVAL_MS ?? '30000'),
    natsUrl: env.NATS_URL,
    natsLogin: env.NATS_USER ? { user: env.NATS_USER, pass: env.NATS_PASSWORD ?? '' } : {},
  };
}

export function createTlsServer(env: BaselineEnv, handler?: http.RequestListener): https.Server {
  return https.createServer(
    { cert: readFileSync(env.certFile), key: readFileSync(env.keyFile) },
    handler,
  );
}

/** Largest body a baseline accepts, like ingress's payload + overhead limit. */
const MAX_BODY = 65_536 + 16_384;

export function readBody(req: http.IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > MAX_BODY) {
        reject(new Error('body too large'));
        req.destroy();
        return;
      }
      chunks.push(c);
    });
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

export function json(res: http.ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(text),
  });
  res.end(text);
}

export function listening(server: https.Server, env: BaselineEnv): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(env.port, env.host, () => {
      const addr = server.address();
      resolve(typeof addr === 'object' && addr ? addr.port : env.port);
    });
  });
}

/** Exits on SIGTERM/SIGINT after closing the server, so a --cpu-prof profile is written. */
export function exitOnSignal(close: () => void): void {
  const stop = () => {
    close();
    process.exit(0);
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
}
