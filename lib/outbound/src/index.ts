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
export {
  OutboundClient,
  type OutboundClientOptions,
  OutboundError,
  type OutboundFailure,
  type PostResult,
} from './https-post.js';
export { checkTargetUrl, parseTargetUrl, type TargetPolicy, TargetUrlError } from './target-url.js';
