export { EventMsgHdrs } from './event-headers.js';
export { jsApi } from './jetstream-api.js';
export {
  isConsumerNotFound,
  isDeleteNotFound,
  isNoMessageFound,
  isNotFound,
  isRecipientFull,
  isStoreFull,
  isStreamNameInUse,
  isStreamNotFound,
  isWrongLastSequence,
  type JsApiError,
  JsErrCode,
  JsErrDescription,
  jsApiError,
  jsErrCode,
} from './jetstream-errors.js';
export {
  type Answer,
  type NoAnswer,
  noAnswer,
  type ReplySchema,
  replyJson,
  type Unanswered,
} from './json-answer.js';
export { ensureRecordBucket, KvRecords, type RecordBucketOptions } from './kv-records.js';
export { NatsRequester, type RequestOutcome } from './nats-requester.js';
export { type Publisher, TurnPublisher, type TurnPublishOptions } from './turn-publisher.js';
