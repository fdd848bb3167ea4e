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
  checkedUrl,
  type ExchangeResult,
  OutboundClient,
  type OutboundClientOptions,
  OutboundError,
  type OutboundFailure,
  type PostResult,
  policyLookup,
} from './https-post.js';
export { checkTargetUrl, parseTargetUrl, type TargetPolicy, TargetUrlError } from './target-url.js';
