import type http from 'node:http';
import type { OpsHandler } from './ops.js';
import { startOpsServer } from './ops-server.js';
import { closeServer, createServer, type Handler, listen, type ServerConfig } from './server.js';

/**
 * What every service's factory (`create*()` in its src/service.ts) returns: built, never
 * listening. {@link serve} (and so `runService`) binds its listeners.
 */
export interface Service {
  /** The public listener's requests (TLS unless TLS_DISABLED): its routes, /healthz, /readyz. */
  readonly handler: Handler;
  /** The ops listener's requests: /metrics, /readyz with its named checks, /healthz. */
  readonly opsHandler: OpsHandler;
  /** What must stand before the port opens: streams, buckets, subscriptions, checks. */
  start?(): Promise<void> | void;
  /** Hooks on the public listener before it listens: WebSocket upgrades, connection filters. */
  attach?(server: http.Server): void;
  /** Pending connects the kernel may hold (capped by net.core.somaxconn); Node's default if absent. */
  readonly backlog?: number;
  /**
   * Stops the service's own work (subscriptions, schedules, sockets), once its listeners stopped
   * accepting. `drained` resolves when the requests in flight on them have been answered, for
   * what must outlive those (a cache they read). The NATS connection and the database are the
   * caller's: it closes them afterwards.
   */
  close(drained: Promise<void>): Promise<void>;
}

/** The settings {@link serve} reads: the public listener's, and the ops listener's. */
export type ServeConfig = ServerConfig & {
  PORT: number;
  HOST: string;
  OPS_HOST: string;
  OPS_PORT: number;
};

/** A service whose listeners are bound. */
export interface Serving {
  /** The public listener's bound port. */
  port: number;
  /** The ops listener's bound port. */
  opsPort: number;
  /**
   * Stops accepting on both listeners, closes the service, then resolves once every request in
   * flight has been answered. The connections the service was built on stay open.
   */
  close(): Promise<void>;
}

/**
 * Starts a built service and binds its listeners: `start()`, the public listener (with the
 * service's hooks), the ops listener, then listening on `port` (default PORT; 0 picks one).
 */
export async function serve(
  service: Service,
  config: ServeConfig,
  port: number = config.PORT,
): Promise<Serving> {
  await service.start?.();
  const server = createServer(config, service.handler);
  service.attach?.(server);
  const ops = await startOpsServer(config, service.opsHandler);
  let bound: number;
  try {
    bound = await listen(server, port, config.HOST, service.backlog);
  } catch (err) {
    await ops.close();
    throw err;
  }
  let closed: Promise<void> | undefined;
  return {
    port: bound,
    opsPort: ops.port,
    close() {
      closed ??= (async () => {
        // New connects are refused from now on; what is in flight finishes while the service
        // stops its own work, and is awaited after.
        const drained = Promise.all([closeServer(server), ops.close()]).then(() => undefined);
        await service.close(drained);
        await drained;
      })();
      return closed;
    },
  };
}
