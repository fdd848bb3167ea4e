import { z } from 'zod';
import { envPort } from './config.js';
import type { OpsHandler } from './ops.js';
import { closeServer, createServer, listen, type ServerConfig } from './server.js';

/**
 * Environment of a service's ops listener (`/metrics`, `/readyz` with its checks, `/healthz`),
 * kept off the public port. `defaultPort` differs per service so they can share a host.
 */
export function opsEnv(defaultPort: number) {
  return {
    /**
     * Address of the ops listener. Default 127.0.0.1: only the host (a Prometheus agent or
     * sidecar on it) can scrape. Set a private-network address to scrape from elsewhere; never a
     * public one.
     */
    OPS_HOST: z.string().min(1).default('127.0.0.1'),
    /** Port of the ops listener (plain HTTP); 0 picks one. */
    OPS_PORT: envPort(defaultPort),
  };
}

export interface OpsServer {
  port: number;
  close(): Promise<void>;
}

/**
 * Serves `handler` (kit's createOpsHandler, without `public`) on OPS_HOST:OPS_PORT over plain
 * HTTP, with the same request timeouts as the service's own listener. Anything else is a JSON 404.
 */
export async function startOpsServer(
  config: Omit<ServerConfig, 'TLS_DISABLED'> & { OPS_HOST: string; OPS_PORT: number },
  handler: OpsHandler,
): Promise<OpsServer> {
  const server = createServer({ ...config, TLS_DISABLED: true }, (req, res) => {
    if (handler(req, res)) return;
    res.writeHead(404, { 'content-type': 'application/json' });
    res.end(
      JSON.stringify({
        error: {
          code: 'not_found',
          message: 'the ops listener serves /healthz, /readyz and /metrics',
        },
      }),
    );
  });
  const port = await listen(server, config.OPS_PORT, config.OPS_HOST);
  return { port, close: () => closeServer(server) };
}
