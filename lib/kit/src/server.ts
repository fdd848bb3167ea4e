import { readFileSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo, Server as NetServer, Socket as NetSocket } from 'node:net';
import { answerClientError } from './client-error.js';
import type { CommonEnv } from './config.js';

export type Handler = (req: http.IncomingMessage, res: http.ServerResponse) => void;

/** The listener settings of {@link createServer}; CommonEnv holds them all. */
export type ServerConfig = Pick<
  CommonEnv,
  | 'TLS_DISABLED'
  | 'TLS_CERT_FILE'
  | 'TLS_KEY_FILE'
  | 'HTTP_REQUEST_TIMEOUT_MS'
  | 'HTTP_HEADERS_TIMEOUT_MS'
  | 'HTTP_KEEP_ALIVE_TIMEOUT_MS'
>;

/**
 * Creates this service's listener: HTTPS with the configured certificate, or plain HTTP only when
 * TLS_DISABLED says a proxy terminates TLS in front of it. Does not listen.
 *
 * A client that sends headers or a body too slowly is answered 408 and cut off (Node's own
 * request timeout is 300 s, so a half-sent body held its connection that long). Idle keep-alive
 * connections last HTTP_KEEP_ALIVE_TIMEOUT_MS: on Node 20 the header timer starts with a
 * request's first byte, so it does not cut idle keep-alive connections short. Requests Node's
 * parser refuses (too slow, headers too large, not HTTP) get the JSON error shape, not an empty
 * body (see {@link answerClientError}).
 */
export function createServer(config: ServerConfig, handler?: Handler): http.Server {
  const timeouts: http.ServerOptions = {
    requestTimeout: config.HTTP_REQUEST_TIMEOUT_MS,
    headersTimeout: config.HTTP_HEADERS_TIMEOUT_MS,
    // Node checks the timeouts on this interval (30 s by default, which would let a slow client
    // hold its connection up to 30 s past them).
    connectionsCheckingInterval: Math.min(1000, Math.ceil(config.HTTP_HEADERS_TIMEOUT_MS / 4)),
  };
  const server = config.TLS_DISABLED
    ? http.createServer(timeouts, handler)
    : https.createServer(
        // A TLS handshake gets as long as a request's headers (Node's default is 120 s).
        { ...timeouts, handshakeTimeout: config.HTTP_HEADERS_TIMEOUT_MS, ...tlsFiles(config) },
        handler,
      );
  server.keepAliveTimeout = config.HTTP_KEEP_ALIVE_TIMEOUT_MS;
  closeSilentConnections(server, config.TLS_DISABLED, config.HTTP_HEADERS_TIMEOUT_MS);
  server.on(
    'clientError',
    answerClientError({
      requestTimeoutMs: config.HTTP_REQUEST_TIMEOUT_MS,
      headersTimeoutMs: config.HTTP_HEADERS_TIMEOUT_MS,
      maxHeaderSize: http.maxHeaderSize,
    }),
  );
  return server;
}

/**
 * Closes a connection that sent no byte of a request within `ms` of opening (of its TLS handshake
 * completing). Node's header timer starts with a request's first byte, so a connection that stayed
 * silent was held for good, each a descriptor, with nothing bounding them per source (an audit
 * held hundreds so). Once a request started, Node's own timers (408) govern; an upgraded
 * socket or a keep-alive one has read its request, so the check leaves it alone.
 */
function closeSilentConnections(server: http.Server, plain: boolean, ms: number): void {
  const watch = (socket: NetSocket) => {
    // No listener on the socket: the timer alone, gone after `ms` (idle sockets stay lean).
    setTimeout(() => {
      if (socket.bytesRead === 0 && !socket.destroyed) socket.destroy();
    }, ms).unref();
  };
  server.on(plain ? 'connection' : 'secureConnection', watch);
}

function tlsFiles(config: ServerConfig): { cert: Buffer; key: Buffer } {
  if (!config.TLS_CERT_FILE || !config.TLS_KEY_FILE) {
    throw new TypeError('TLS_CERT_FILE and TLS_KEY_FILE are required unless TLS_DISABLED=true');
  }
  return { cert: readFileSync(config.TLS_CERT_FILE), key: readFileSync(config.TLS_KEY_FILE) };
}

/**
 * Listens and resolves with the bound port (useful with port 0). `backlog`: pending connects the
 * kernel may hold (capped by net.core.somaxconn); Node's default, 511, when absent.
 */
export function listen(
  server: NetServer,
  port: number,
  host: string,
  backlog?: number,
): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen({ port, host, ...(backlog === undefined ? {} : { backlog }) }, () => {
      server.off('error', reject);
      resolve((server.address() as AddressInfo).port);
    });
  });
}

/** How often a closing server looks for connections its last responses left idle, ms. */
const CLOSING_SWEEP_MS = 50;

/**
 * Stops accepting and resolves when every request ended. A keep-alive connection is not left to
 * send more: every response from now on carries `Connection: close`, and connections are closed as
 * soon as they are idle (Node closes the idle ones only once, when `close()` is called, so clients
 * sending back to back kept theirs until the shutdown timed out: found by an audit).
 */
export function closeServer(server: http.Server): Promise<void> {
  server.prependListener('request', (_req, res) => {
    res.shouldKeepAlive = false;
  });
  return new Promise((resolve) => {
    const sweep = setInterval(() => server.closeIdleConnections(), CLOSING_SWEEP_MS);
    server.close(() => {
      clearInterval(sweep);
      resolve();
    });
    server.closeIdleConnections();
  });
}
