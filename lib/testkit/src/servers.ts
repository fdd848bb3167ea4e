/**
 * What a private server of the test kit is, whichever way it was started (a local binary, or a
 * container with HERALD_TEST_DOCKER=1): the starters and the container path share these.
 */

export interface NatsServer {
  url: string;
  port: number;
  /** Stops the server (SIGTERM, then SIGKILL) and deletes its store unless keepStore. */
  stop(opts?: { keepStore?: boolean }): Promise<void>;
  /** Restarts on the same port and store (simulates a broker restart). */
  restart(): Promise<void>;
}

export interface PostgresServer {
  /** Connection string of the `herald` database. */
  url: string;
  port: number;
  stop(): Promise<void>;
}
