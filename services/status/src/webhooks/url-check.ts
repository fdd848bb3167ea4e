import {
  checkTargetUrl,
  ForbiddenAddressError,
  type Resolver,
  TargetUrlError,
  UnresolvedHostError,
} from '@herald/outbound';
import { HeraldError } from '@herald/proto';

/**
 * An endpoint's URL as `create` accepts it: https only, never a loopback, private, link-local,
 * metadata or unspecified address after DNS resolution, unless WEBHOOK_ALLOW_PRIVATE=true (which
 * also allows http://). The error names the `url` field and says what would do.
 */
export async function checkEndpointUrl(
  url: string,
  opts: { allowPrivate: boolean; resolver?: Resolver },
): Promise<string> {
  try {
    return (await checkTargetUrl(url, opts)).href;
  } catch (err) {
    if (err instanceof ForbiddenAddressError) {
      throw new HeraldError(
        'invalid_field',
        `url: ${err.message}: give a public https:// URL (WEBHOOK_ALLOW_PRIVATE=true lifts this rule, in development only)`,
        { field: 'url' },
      );
    }
    if (err instanceof TargetUrlError || err instanceof UnresolvedHostError) {
      throw new HeraldError('invalid_field', `url: ${err.message}`, { field: 'url' });
    }
    throw err;
  }
}
