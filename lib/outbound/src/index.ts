export {
  addressRange,
  ForbiddenAddressError,
  isPublicAddress,
  type ResolvedAddress,
  type Resolver,
  resolveAllowed,
  systemResolver,
  UnresolvedHostError,
} from './address-policy.js';
export { checkTargetUrl, parseTargetUrl, type TargetPolicy, TargetUrlError } from './target-url.js';
