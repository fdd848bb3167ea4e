export {
  InboxClient,
  type InboxExpireAnswer,
  type InboxQueryAnswer,
  type InboxStoreAnswer,
} from './inbox-client.js';
export {
  type DeviceRegistration,
  PUSH_API_UNAVAILABLE,
  PushClient,
  type PushListAnswer,
  type PushRegistration,
  type PushStatusAnswer,
  type PushSubscribeAnswer,
  type PushSubscriptionAnswer,
  type PushTestAnswer,
  type PushVapidAnswer,
} from './push-client.js';
export { createStatusAcks } from './status-ack-metrics.js';
export {
  DEFAULT_STATUS_ACK_OPTIONS,
  MAX_BACKOFF_FACTOR,
  type StatusAckOptions,
  StatusAcks,
  StatusTicket,
} from './status-acks.js';
export {
  DEFAULT_STATUS_BATCH_LIMITS,
  StatusBatcher,
  type StatusBatchLimits,
} from './status-batcher.js';
export { type StatusAnswer, StatusClient, type TrimAnswer } from './status-client.js';
export {
  TOPIC_API_UNAVAILABLE,
  type TopicChangeAnswer,
  type TopicChunkAnswer,
  TopicClient,
  type TopicDeleteAnswer,
  type TopicListAnswer,
  type TopicSnapshotAnswer,
} from './topic-client.js';
export {
  WEBHOOK_API_UNAVAILABLE,
  type WebhookAttemptsAnswer,
  WebhookClient,
  type WebhookEndpointAnswer,
  type WebhookListAnswer,
  type WebhookQueuedAnswer,
  type WebhookSecretAnswer,
} from './webhook-client.js';
