import type http from 'node:http';
import { createOpsHandler, type Handler, natsAnswers } from '@herald/kit';
import type { NatsConnection } from 'nats';
import type { Registry } from 'prom-client';

/**
 * The public port: /healthz and /readyz's status only; a JSON 404 for anything else. /metrics and
 * the named readiness checks are for operators, on the ops listener (`createRetentionOpsHandler`).
 */
export function createRetentionHandler(nc: NatsConnection, registry: Registry): Handler {
  const ops = createOpsHandler(registry, natsCheck(nc), { public: true });
  return (req, res) => {
    if (ops(req, res)) return;
    res.writeHead(404, { 'content-type': 'application/json' });
    res.end(
      JSON.stringify({
        error: {
          code: 'not_found',
          message:
            'retention serves /healthz and /readyz here; /metrics is on its ops listener (OPS_HOST:OPS_PORT)',
        },
      }),
    );
  };
}

/** For the ops listener (kit startOpsServer): /metrics, /readyz with the NATS check, /healthz. */
export function createRetentionOpsHandler(
  nc: NatsConnection,
  registry: Registry,
): (req: http.IncomingMessage, res: http.ServerResponse) => boolean {
  return createOpsHandler(registry, natsCheck(nc));
}

/**
 * NATS answers a round trip: the connection's state alone would pass a client that is reconnecting,
 * which is neither closed nor draining.
 */
function natsCheck(nc: NatsConnection): () => Promise<{ nats: boolean }> {
  return async () => ({ nats: await natsAnswers(nc) });
}
