import { createOpsHandler, type Handler, type ReadinessCheck } from '@herald/kit';
import { CONNECT_PATH, HeraldError } from '@herald/proto';
import type { Registry } from 'prom-client';

/**
 * The listener's plain HTTP side: /healthz and /readyz's status, else a JSON error naming the
 * socket endpoint, readable cross-origin. /metrics and the readiness checks are for operators: on the ops listener.
 */
export function httpHandler(registry: Registry, ready: ReadinessCheck): Handler {
  const ops = createOpsHandler(registry, ready, { public: true });
  return (req, res) => {
    if (ops(req, res)) return;
    const error =
      (req.url ?? '').split('?')[0] === CONNECT_PATH
        ? new HeraldError(
            'invalid_field',
            `${CONNECT_PATH} takes WebSocket upgrades only: connect with wss://`,
            { field: 'Upgrade' },
          )
        : new HeraldError('not_found', 'No such route: the socket endpoint is /ws/connect');
    res.writeHead(error.status, {
      'content-type': 'application/json',
      'cache-control': 'no-store',
      // The SDK's probe of a socket that failed before opening reads this status from any page
      // (clients/sdk/src/probe.ts): it holds no secret, and no credential is ever sent for it.
      'access-control-allow-origin': '*',
    });
    res.end(JSON.stringify(error.toBody()));
  };
}
