import { type Resolver, resolveAllowed } from './address-policy.js';

/** A URL Herald will not send to; the message says why and what would do. */
export class TargetUrlError extends Error {
  readonly code = 'invalid_target_url';
  constructor(message: string) {
    super(message);
    this.name = 'TargetUrlError';
  }
}

export interface TargetPolicy {
  /** Lift the address rule and allow http:// too: development only (docs/security.md). */
  allowPrivate: boolean;
  resolver?: Resolver;
}

/**
 * Parses a customer's URL and applies the rule: https only, no credentials in it, and a host that
 * resolves, now, to public addresses only. Throws a {@link TargetUrlError}, or the address
 * policy's errors. The same check runs again on every request (see https-post.ts), since what a
 * name resolves to can change after it was accepted.
 */
export async function checkTargetUrl(raw: string, policy: TargetPolicy): Promise<URL> {
  const url = parseTargetUrl(raw, policy);
  await resolveAllowed(url.hostname, policy);
  return url;
}

/** The syntactic half of {@link checkTargetUrl}: no lookup. */
export function parseTargetUrl(raw: string, policy: Pick<TargetPolicy, 'allowPrivate'>): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new TargetUrlError('must be an absolute URL such as https://example.com/webhooks');
  }
  const schemes = policy.allowPrivate ? ['https:', 'http:'] : ['https:'];
  if (!schemes.includes(url.protocol)) {
    throw new TargetUrlError(
      policy.allowPrivate
        ? 'must be an https:// or http:// URL'
        : 'must be an https:// URL (http:// only where WEBHOOK_ALLOW_PRIVATE=true, in development)',
    );
  }
  if (url.username !== '' || url.password !== '') {
    throw new TargetUrlError(
      'must not carry credentials (user:password@): verify the webhook signature instead',
    );
  }
  if (url.hostname === '') throw new TargetUrlError('must name a host');
  return url;
}
