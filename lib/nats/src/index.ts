export { EventMsgHdrs } from './event-headers.js';
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
export { NatsRequester, type RequestOutcome, replyJson } from './nats-requester.js';
export { type Publisher, TurnPublisher, type TurnPublishOptions } from './turn-publisher.js';
