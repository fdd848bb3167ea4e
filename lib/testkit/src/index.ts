// The vitest fixtures live at '@herald/testkit/fixtures': this entry must load outside vitest too
// (bench and scripts start servers with it).
export {
  type ApnsAnswer,
  type ApnsArrival,
  ApnsSimulator,
  type SimApnsKey,
} from './apns-simulator.js';
export { makeCerts, type TestCerts } from './certs.js';
export { childCpuMs } from './child-cpu.js';
export { eventually } from './eventually.js';
export { which } from './exec.js';
export {
  type FcmAnswer,
  type FcmArrival,
  FcmSimulator,
  type FcmTokenGrant,
  type SimServiceAccount,
} from './fcm-simulator.js';
export { get, type HttpResult, post, request } from './http-client.js';
export { NATS_USERS, type NatsCredentials, type NatsUser } from './nats-auth.js';
export { natsServerBinary, pinnedNatsVersion, versionAtLeast } from './nats-binary.js';
export { launchNats, stopProcess } from './nats-launch.js';
export { type NatsServer, startNatsServer } from './nats-server.js';
export { type CoreNatsServer, startCoreNatsServer } from './nats-server-core.js';
export { freePort, waitForPort } from './ports.js';
export { type PostgresServer, startPostgres } from './postgres.js';
export {
  type PushArrival,
  PushService,
  type PushServiceOptions,
  type TestWebPushSubscription,
} from './push-service.js';
export {
  REPO_ROOT,
  type ServiceName,
  type ServiceProcess,
  startServiceProcess,
} from './service-process.js';
export { openSocket, type SocketOptions, TestSocket } from './socket-client.js';
export { type Stack, type StackOptions, startStack } from './stack.js';
export {
  type KeyObject,
  type PusherAppObject,
  runAdmin,
  type Tenants,
  tenants,
} from './tenants.js';
export { TEST_PLANS } from './test-plans.js';
export { PARENT_DEATH_SIGNAL, spawnTied } from './tied-spawn.js';
export {
  type WebhookArrival,
  WebhookReceiver,
  type WebhookReceiverOptions,
} from './webhook-receiver.js';
