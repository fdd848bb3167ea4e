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
  bodyMd5,
  channelAuthOk,
  pusherRecipient,
  requestSignature,
  stringsEqual,
  userAuthOk,
} from './pusher-sign.js';
export { checkRecipientToken, type TokenPolicy } from './recipient-token.js';
export { authorizeSubscriber, type SubscriberUse } from './subscriber.js';
export { type Verdict, VerdictCache, type VerdictCacheOptions } from './verdict-cache.js';
