import type { Kysely } from 'kysely';
import type { NatsConnection } from 'nats';
import { type CommonEnv, checkConfigFiles } from './config.js';
import { createDb } from './db.js';
import { createLogger, type Logger } from './logger.js';
import { connectNats } from './nats.js';
import { type ServeConfig, type Service, serve } from './service.js';
import { exitOnStartupError, handleShutdown } from './shutdown.js';

/** What runService reads of every service's config (its CommonEnv, ports and ops listener). */
export type RunConfig = CommonEnv & ServeConfig;

/** What a service with a database adds to it. */
export interface DatabaseConfig {
  DATABASE_URL: string;
  DB_POOL_MAX: number;
  MIGRATE_ON_START: boolean;
}

/** What `create` is given: the connections runService opened, which it closes at the end. */
export interface ServiceDeps {
  nc: NatsConnection;
  logger: Logger;
}

interface RunOptions<C extends RunConfig> {
  /** The service's name: its logs', and the one a startup failure is reported under. */
  name: string;
  /** The NATS connection's name, as nats-server lists it. Default `herald-<name>`. */
  connectionName?: string;
  /** Reads and checks the configuration (kit parseEnv); throws a ConfigError naming every problem. */
  loadConfig(env: Record<string, string | undefined>): C;
}

/**
 * Runs a service as its process: load and check the config (every file it names readable), make
 * the logger, open the database (running its migrations when MIGRATE_ON_START) for a service that
 * has one, connect to NATS, `create` the service, {@link serve} it and log `listening`; on
 * SIGTERM or SIGINT, close it, then drain NATS and close the database, within SHUTDOWN_TIMEOUT_MS.
 * A failure before `listening` exits 1 with the reason on stderr.
 */
export function runService<C extends RunConfig & DatabaseConfig, DB>(
  opts: RunOptions<C> & {
    /** Applies the service's pending migrations; returns the names applied. */
    migrate(db: Kysely<DB>): Promise<string[]>;
    create(config: C, deps: ServiceDeps & { db: Kysely<DB> }): Service;
  },
): void;
export function runService<C extends RunConfig>(
  opts: RunOptions<C> & { create(config: C, deps: ServiceDeps): Service },
): void;
export function runService(opts: AnyRunOptions): void {
  run(opts).catch((err: unknown) => exitOnStartupError(opts.name, err));
}

/** What both overloads take, as the implementation sees it. */
type AnyRunOptions = RunOptions<RunConfig> & {
  migrate?(db: Kysely<unknown>): Promise<string[]>;
  create(config: RunConfig, deps: ServiceDeps & { db?: Kysely<unknown> }): Service;
};

async function run(opts: AnyRunOptions): Promise<void> {
  const { name } = opts;
  const config = opts.loadConfig(process.env);
  checkConfigFiles(name, config);
  const logger = createLogger(name, config.LOG_LEVEL);
  const db = opts.migrate
    ? await openDatabase(config as RunConfig & DatabaseConfig, opts.migrate, logger)
    : undefined;
  const nc = await connectNats(config, opts.connectionName ?? `herald-${name}`, logger);
  const service = opts.create(config, { nc, logger, ...(db ? { db } : {}) });
  const serving = await serve(service, config);
  logger.info(
    {
      port: serving.port,
      tls: !config.TLS_DISABLED,
      opsPort: serving.opsPort,
      opsHost: config.OPS_HOST,
    },
    'listening',
  );
  handleShutdown(
    logger,
    async () => {
      // The service stops answering first, so requests move to the other instances.
      await serving.close();
      await nc
        .drain()
        .catch((err: unknown) => logger.warn({ err: String(err) }, 'NATS drain failed'));
      await db?.destroy();
    },
    config.SHUTDOWN_TIMEOUT_MS,
  );
}

async function openDatabase(
  config: DatabaseConfig,
  migrate: (db: Kysely<unknown>) => Promise<string[]>,
  logger: Logger,
): Promise<Kysely<unknown>> {
  const db = createDb<unknown>(config.DATABASE_URL, config.DB_POOL_MAX, (err) =>
    // The message only (no connection string): the pool replaces the connection by itself.
    logger.warn({ err: err.message }, 'a Postgres connection dropped'),
  );
  if (config.MIGRATE_ON_START) {
    const applied = await migrate(db);
    logger.info({ applied }, applied.length ? 'migrations applied' : 'schema up to date');
  }
  return db;
}
