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
