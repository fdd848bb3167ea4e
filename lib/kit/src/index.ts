export {
  AuthFailureEnv,
  AuthFailureLimiter,
  isAuthFailure,
  sourceAddress,
} from './auth-failures.js';
export {
  CommonEnv,
  ConfigError,
  envBool,
  envInt,
  envPort,
  parseEnv,
  requireTls,
} from './config.js';
export { createDb, dbReady } from './db.js';
export { type ErrorMappingOptions, toHeraldError } from './error-mapping.js';
export { ensureKvBucket, type KvBucketOptions } from './kv-bucket.js';
export { createLogger, type Logger, safePath } from './logger.js';
export {
  createMigrator,
  type MigrationSet,
  migrateToLatest,
  type ServiceMigrations,
  serviceMigrations,
} from './migrations.js';
export { connectNats } from './nats.js';
export { type NatsLink, watchNatsLink } from './nats-link.js';
export { natsAnswers } from './nats-readiness.js';
export {
  createOpsHandler,
  createRegistry,
  type OpsHandler,
  type OpsHandlerOptions,
  type ReadinessCheck,
} from './ops.js';
export { type OpsServer, opsEnv, startOpsServer } from './ops-server.js';
export {
  type DatabaseConfig,
  type RunConfig,
  runService,
  type ServiceDeps,
} from './run-service.js';
export { SecretBox, SecretEncryptionKey } from './secret-box.js';
export { closeServer, createServer, type Handler, listen, type ServerConfig } from './server.js';
export { type ServeConfig, type Service, type Serving, serve } from './service.js';
export { exitOnStartupError } from './shutdown.js';
export {
  msUntilToken,
  refillBucket,
  secondsUntilToken,
  type TokenBucket,
  type TokenBucketLimits,
} from './token-bucket.js';
