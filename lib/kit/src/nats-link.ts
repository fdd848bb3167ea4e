import type { NatsConnection } from 'nats';

/** Whether a service's NATS connection has been without a server for too long to wait on. */
export interface NatsLink {
  /**
   * True when the connection is closed, or lost its server more than the grace ago and has not
   * reconnected since. A request made then would only wait out its timeout in nats.js's buffer.
   */
  readonly down: boolean;
}

/**
 * Watches the connection's status events: `disconnect` starts an outage, `reconnect` ends it.
 * Within `graceMs` of the loss a caller still waits (a reconnect to another cluster member, or a
 * restarted server, carries buffered requests through); past it, callers are told at once.
 */
export function watchNatsLink(
  nc: NatsConnection,
  graceMs: number,
  now: () => number = performance.now.bind(performance),
): NatsLink {
  let lostAt: number | undefined;
  // The iteration ends when the connection closes.
  void (async () => {
    for await (const s of nc.status()) {
      if (s.type === 'disconnect') lostAt ??= now();
      else if (s.type === 'reconnect') lostAt = undefined;
    }
  })();
  return {
    get down() {
      if (nc.isClosed()) return true;
      return lostAt !== undefined && now() - lostAt >= graceMs;
    },
  };
}
