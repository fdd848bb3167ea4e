export {
  ensureQueueFloorBucket,
  floorStands,
  parseQueueFloorKey,
  QUEUE_FLOOR_BUCKET,
  type QueueFloorBucketOptions,
  QueueFloors,
  queueFloorKey,
} from './ack-floors.js';
export {
  DEFAULT_DEVICE_POSITION_TTL_DAYS,
  DEVICE_POSITION_BUCKET,
  type DevicePosition,
  DevicePositions,
  devicePositionKey,
  ensureDevicePositionBucket,
  INBOX_POSITION_SPACE,
} from './device-positions.js';
export {
  type LegacyMigration,
  type MigrateOptions,
  migrateLegacyQueue,
} from './legacy-queue.js';
export { storesAnythingFor } from './lookup.js';
export { enqueue, type QueuedEvent, type QueueOutcome } from './publish.js';
export { type ConsumerPage, type FirstEvent, QueueApi, type QueueApiLimiter } from './queue-api.js';
export { type AccountDepth, measureQueueDepth, type QueueDepth } from './queue-depth.js';
export {
  DEFAULT_QUEUE_PARTITIONS,
  LEGACY_QUEUE_STREAM,
  MAX_QUEUE_PARTITIONS,
  QueueLayout,
  queueStreamOf,
} from './queue-layout.js';
export {
  checkQueueLayout,
  type EnsuredQueueStreams,
  type EnsureQueueStreamOptions,
  ensureQueueStream,
  QueueLayoutMismatch,
  type QueueStreamChange,
} from './queue-stream.js';
export {
  type Admission,
  QueuedRecipients,
  type QueuedRecipientsOptions,
} from './queued-recipients.js';
export { RecipientDepth, type RecipientDepthOptions, type Room } from './recipient-depth.js';
export {
  parseQueueConsumerName,
  type QueueConsumerOptions,
  type QueueStreamOptions,
  queueConsumerConfig,
  queueConsumerName,
  queueStreamConfig,
} from './stream-config.js';
