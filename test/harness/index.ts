export { makeCerts, type TestCerts } from './certs.js';
export { get, type HttpResult, post } from './http-client.js';
export { type NatsServer, startNatsServer } from './nats-server.js';
export { freePort, waitForPort } from './ports.js';
export { type PostgresServer, startPostgres } from './postgres.js';
export { REPO_ROOT, type ServiceName } from './service-process.js';
export { openSocket, type SocketOptions, TestSocket } from './socket-client.js';
export { type KeyObject, type Stack, type StackOptions, startStack } from './stack.js';
