export { digestsEqual, hashKey } from './key-hash.js';
export {
  authorizeKeyUse,
  authorizeRecipient,
  type KeyEntry,
  type KeyUse,
  keyUseDeadline,
} from './key-policy.js';
export { KeyVerifier, type KeyVerifierOptions } from './key-verifier.js';
