/**
 * The zod-free part of the contract: constants a browser client needs at run time. The SDK
 * imports `@herald/proto/wire` so its bundle carries none of zod; types come from the main entry
 * as type-only imports, which are erased.
 */
export {
  CloseCodes,
  closeCodeOf,
  type ErrorCode,
  ErrorCodes,
  HeraldError,
  isErrorCode,
  statusOf,
} from './errors.js';
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
  TOPIC_EXCLUDE_MAX,
  TOPIC_MEMBERS_PAGE_MAX,
  TOPIC_MEMBERS_PER_CALL_MAX,
  TOPIC_NAME,
} from './topic-names.js';
export { isUuidV4, UUID_V4 } from './uuid.js';

/** The exact `status` strings of the dispatch contract (DESIGN.md section 1). */
export const DispatchStatus = {
  sent: 'sent',
  queued: 'User offline, notification saved',
  /** A topic event (issue 44): its fan-out is durably accepted; each member's copy follows. */
  accepted: 'accepted',
  failed: 'Failed to send/save notification',
} as const;
export type DispatchStatus = (typeof DispatchStatus)[keyof typeof DispatchStatus];

/** The subprotocol the SDK offers. Without it, a socket gets plain framing. */
export const SUBPROTOCOL = 'herald.v1';

/** Path of the WebSocket endpoint. */
export const CONNECT_PATH = '/ws/connect';

/** Paths of the dispatch endpoint: canonical and alias, identical behaviour. */
export const NOTIFY_PATHS = ['/notify', '/bff_v001/notify'] as const;

/** Paths of the batch dispatch endpoint: canonical and alias, identical behaviour. */
export const NOTIFY_BATCH_PATHS = ['/notify/batch', '/bff_v001/notify/batch'] as const;
