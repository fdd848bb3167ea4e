export { type Answer, AnswerCache, type AnswerCacheOptions } from './answer-cache.js';
export { digestsEqual, hashKey } from './key-hash.js';
export {
  authorizeKeyUse,
  authorizeRecipient,
  authorizeScope,
  type KeyEntry,
  type KeyUse,
  keyUseDeadline,
  type ScopeUse,
} from './key-policy.js';
export { KeyVerifier, type KeyVerifierOptions } from './key-verifier.js';
export {
  type PusherAppRef,
  PusherAppVerifier,
  type PusherAppVerifierOptions,
  type VerifiedPusherApp,
} from './pusher-apps.js';
export {
  bodyMd5,
  bodyMd5Digest,
  channelAuthOk,
  hexEqual,
  pusherRecipient,
  requestDigest,
  requestSignature,
  stringsEqual,
  userAuthOk,
} from './pusher-sign.js';
export { checkRecipientToken, type TokenPolicy } from './recipient-token.js';
export { authorizeSubscriber, type SubscriberUse } from './subscriber.js';
