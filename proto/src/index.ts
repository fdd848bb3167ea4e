// The contract's whole public surface, by name (as nats.js's mod.ts): what a module adds is
// exported here on purpose, never by a wildcard. `@herald/proto/wire` is the zod-free part.
export { API_KEY_FORMAT, isWellFormedApiKey } from './api-key.js';
export {
  AuthInvalidate,
  AuthVerifyReply,
  AuthVerifyRequest,
  CredentialKind,
  DashboardScope,
  KeyKind,
  KeyPrefix,
  KeyScope,
  SigningSecret,
  VerifiedKey,
} from './auth.js';
export { BatchAccepted, BatchItemResult, BatchReply } from './batch.js';
export {
  BillingNotice,
  billingSubjects,
  PaymentNotice,
  PaymentStatus,
  RenewalReminder,
} from './billing.js';
export { CONNECTIONS_BUCKET } from './connections.js';
export { dashboardRecipient, isDashboardRecipient } from './dashboard.js';
export { ErrorReply, errorOfReply, errorReply } from './error-reply.js';
export {
  CloseCodes,
  closeCodeOf,
  type ErrorBody,
  type ErrorCode,
  ErrorCodes,
  HeraldError,
  isErrorCode,
  statusOf,
} from './errors.js';
export { EventHeaders, EventMeta, LiveReply, QueueAckFloor, QueuedNotice } from './events.js';
export {
  INBOX_HISTORY_PATH,
  INBOX_MAX_DAYS,
  INBOX_MAX_PAGE,
  INBOX_MAX_READ_IDS,
  INBOX_MIN_DAYS,
  INBOX_READ_PATH,
  InboxCatchUpEvent,
  InboxCursor,
  InboxDays,
  InboxEvent,
  InboxExpireReply,
  InboxExpireRequest,
  InboxHistoryBody,
  InboxQuery,
  InboxQueryReply,
  InboxReadBody,
  InboxStoreEvent,
  InboxStoreReply,
  InboxStoreRequest,
  InboxStoreResult,
  InboxUnreadNotice,
} from './inbox.js';
export {
  decodeLiveBatch,
  encodeLiveBatch,
  LiveBatchEvent,
  LiveBatchMeta,
  LiveBatchReply,
  LiveHoldersQuery,
  LiveHoldersReply,
} from './live-batch.js';
export {
  NATS_CALLOUT_ISSUER_ENV,
  natsPasswordEnv,
  renderPermissions,
  renderUsersConf,
} from './nats-config.js';
export {
  AUTH_CALLOUT_SUBJECT,
  backendPermissions,
  INBOX,
  NATS_ADMIN_USER,
  NATS_SERVICES,
  type NatsPermissions,
  type NatsService,
  natsUserOf,
  permits,
  type SubjectList,
  servicePermissions,
  subjectMatches,
  subjectPatterns,
} from './nats-permissions.js';
export {
  Client,
  DispatchReply,
  ErrorDetail,
  invalidApiKey,
  NotifyAccepted,
  NotifyFailed,
  NotifyRefused,
  NotifyRequest,
  parseNotifyRequest,
} from './notify.js';
export { Plan, PlanCatalogue, PlanLimits, PlanPrice } from './plans.js';
export {
  DEFAULT_TOKEN_TTL_S,
  MAX_TOKEN_TTL_S,
  RECIPIENT_TOKEN_ALG,
  type RecipientTokenClaims,
  type RecipientTokenInput,
  recipientTokenClaims,
  SIGNING_SECRET_FORMAT,
  SIGNING_SECRET_PREFIX,
  TokenInputError,
  tokenTtlSeconds,
} from './recipient-token.js';
export {
  AckFrame,
  BatchedEvent,
  ClientFrame,
  ConnectParams,
  DEVICE_FORMAT,
  ErrorFrame,
  EventFrame,
  EventsFrame,
  encodeEventFrame,
  encodeEventsFrame,
  HistoryFrame,
  HistoryRequestFrame,
  InboxFrame,
  MAX_DEVICE_LENGTH,
  MAX_EVENTS_PER_FRAME,
  MAX_TOKEN_LENGTH,
  parseConnectParams,
  REQUEST_REF_FORMAT,
  ReadFrame,
  RequestRef,
  ServerFrame,
  TokenFrame,
} from './socket.js';
export {
  EventStatus,
  EventStatusView,
  STATUS_BATCH_RECORDS_MAX,
  STATUS_CONSUMER,
  STATUS_PATH,
  STATUS_STREAM,
  STATUS_WINDOWS,
  StatusBatch,
  StatusBatchEnvelope,
  StatusCounts,
  StatusEvent,
  StatusLookupRequest,
  StatusQuery,
  StatusReply,
  type StatusStreamOptions,
  StatusTrimReply,
  StatusTrimRequest,
  StatusWindow,
  statusStreamConfig,
} from './status.js';
export {
  accountOfDispatchBatchSubject,
  accountOfDispatchSubject,
  accountOfLastToken,
  assertToken,
  QUEUE_SLOTS,
  queueGroups,
  queueSlot,
  type RecipientSubjects,
  recipientSubjectKind,
  recipientSubjects,
  subjects,
} from './subjects.js';
export { isUuidV4, UUID_V4 } from './uuid.js';
export {
  CONNECT_PATH,
  DispatchStatus,
  NOTIFY_BATCH_PATHS,
  NOTIFY_PATHS,
  SUBPROTOCOL,
} from './wire.js';
