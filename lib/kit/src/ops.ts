import type http from 'node:http';
import { collectDefaultMetrics, Registry } from 'prom-client';
import { registerHeapAfterGc } from './heap-after-gc.js';

/** A fresh metrics registry with Node's default process metrics, labelled by service. */
export function createRegistry(service: string): Registry {
  const registry = new Registry();
  registry.setDefaultLabels({ service });
  collectDefaultMetrics({ register: registry });
  registerHeapAfterGc(registry);
  return registry;
}

/** A listener's ops routes: answers the request and returns true, or returns false to pass it on. */
export type OpsHandler = (req: http.IncomingMessage, res: http.ServerResponse) => boolean;

export type ReadinessCheck = () => Promise<Record<string, boolean>> | Record<string, boolean>;

export interface OpsHandlerOptions {
  /**
   * For a public listener: `/readyz` answers its status only (which dependencies fail is for
   * operators), and `/metrics` is not served. Default false (the ops listener).
   */
  public?: boolean;
}

/**
 * Serves `/healthz` (the process is alive), `/readyz` (every dependency check passes, 503
 * otherwise, with the failing ones named) and `/metrics` (Prometheus text). Returns false for any
 * other path so the caller can route it.
 */
export function createOpsHandler(
  registry: Registry,
  ready: ReadinessCheck,
  opts: OpsHandlerOptions = {},
): OpsHandler {
  return (req, res) => {
    const path = (req.url ?? '').split('?')[0];
    if (req.method !== 'GET' && req.method !== 'HEAD') return false;
    if (path === '/healthz') {
      send(res, 200, 'application/json', '{"status":"ok"}');
      return true;
    }
    if (path === '/readyz') {
      void Promise.resolve(ready()).then(
        (checks) => {
          const ok = Object.values(checks).every(Boolean);
          send(
            res,
            ok ? 200 : 503,
            'application/json',
            JSON.stringify({
              status: ok ? 'ready' : 'not_ready',
              ...(opts.public ? {} : { checks }),
            }),
          );
        },
        () => send(res, 503, 'application/json', '{"status":"not_ready"}'),
      );
      return true;
    }
    if (path === '/metrics' && !opts.public) {
      void registry.metrics().then(
        (text) => send(res, 200, registry.contentType, text),
        () => send(res, 500, 'text/plain', 'metrics unavailable'),
      );
      return true;
    }
    return false;
  };
}

function send(res: http.ServerResponse, status: number, type: string, body: string): void {
  res.writeHead(status, { 'content-type': type, 'cache-control': 'no-store' });
  res.end(body);
}
