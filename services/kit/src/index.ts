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
export { digestsEqual, hashKey } from './key-hash.js';
export { authorizeKeyUse, type KeyUse, keyUseDeadline } from './key-policy.js';
export { KeyVerifier, type KeyVerifierOptions } from './key-verifier.js';
export { ensureKvBucket, type KvBucketOptions } from './kv-bucket.js';
export { createLogger, type Logger, safePath } from './logger.js';
export { connectNats, natsReady } from './nats.js';
export { NatsRequester, type RequestOutcome, replyJson } from './nats-requester.js';
export { createOpsHandler, createRegistry, type ReadinessCheck } from './ops.js';
export {
  type EnsureQueueStreamOptions,
  ensureQueueStream,
  type QueueStreamChange,
} from './queue-stream.js';
export { closeServer, createServer, type Handler, listen } from './server.js';
export { exitOnStartupError, handleShutdown } from './shutdown.js';
