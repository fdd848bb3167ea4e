import { readFileSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import type { CommonEnv } from './config.js';

export type Handler = (req: http.IncomingMessage, res: http.ServerResponse) => void;

/**
 * Creates this service's listener: HTTPS with the configured certificate, or plain HTTP only when
 * TLS_DISABLED says a proxy terminates TLS in front of it. Does not listen.
 */
export function createServer(config: CommonEnv, handler?: Handler): http.Server {
  if (config.TLS_DISABLED) return http.createServer(handler);
  if (!config.TLS_CERT_FILE || !config.TLS_KEY_FILE) {
    throw new TypeError('TLS_CERT_FILE and TLS_KEY_FILE are required unless TLS_DISABLED=true');
  }
  return https.createServer(
    { cert: readFileSync(config.TLS_CERT_FILE), key: readFileSync(config.TLS_KEY_FILE) },
    handler,
  );
}

/** Listens and resolves with the bound port (useful with port 0). */
export function listen(server: http.Server, port: number, host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve((server.address() as AddressInfo).port);
    });
  });
}

/** Stops accepting, closes idle keep-alive connections, resolves when every request ended. */
export function closeServer(server: http.Server): Promise<void> {
  return new Promise((resolve) => {
    server.close(() => resolve());
    server.closeIdleConnections();
  });
}
