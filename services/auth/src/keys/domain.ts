import { HeraldError, type KeyKind } from '@herald/proto';

/** DNS's own limit on a host name; longer ones cannot be real origins. */
export const MAX_HOST_LENGTH = 253;

const EXAMPLE = 'https://app.example.com';

/**
 * Validates the domain of a web key and returns it as the origin browsers send in the Origin
 * header (`https://host[:port]`): scheme and host lower-cased, default port dropped, a trailing
 * `/` tolerated. Anything an Origin header can never equal (paths, queries, fragments,
 * credentials, wildcards) is refused rather than silently stripped, so the user learns the key
 * would never have matched. Plain http is accepted only for `http://localhost[:port]` on test
 * keys, for local development. Throws a {@link HeraldError} naming `domain` and the fix.
 */
export function normalizeDomain(input: string, kind: KeyKind): string {
  const raw = input.trim();
  if (raw === '') {
    fail(`must not be empty: give the origin your web app is served from, such as ${EXAMPLE}`);
  }
  if (/\s/.test(raw) || hasControlCharacter(raw)) {
    fail(`must not contain spaces or control characters: give one origin, such as ${EXAMPLE}`);
  }
  if (raw.includes('*')) {
    fail(
      `must be one exact origin, wildcards are not allowed: create one key per origin, such as ${EXAMPLE}`,
    );
  }
  if (!/^[a-z][a-z0-9+.-]*:\/\//i.test(raw)) {
    fail(`must start with https:// followed by the host, such as ${EXAMPLE}`);
  }
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    fail(`is not a valid origin: write it as https://host[:port], such as ${EXAMPLE}`);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    fail(`must use https://, not ${url.protocol}//: write it as ${EXAMPLE}`);
  }
  if (url.username !== '' || url.password !== '') {
    fail('must not contain a user name or password: write only https://host[:port]');
  }
  if (url.pathname !== '/' || raw.includes('?') || raw.includes('#')) {
    fail(
      `must be an origin only, without path, query or fragment: write ${url.protocol}//${url.host}`,
    );
  }
  if (url.hostname.length > MAX_HOST_LENGTH) {
    fail(`has a host longer than ${MAX_HOST_LENGTH} characters, which DNS does not allow`);
  }
  if (url.protocol === 'http:') {
    if (url.hostname !== 'localhost') {
      fail(
        `must use https:// (http is accepted only for http://localhost): write https://${url.host}`,
      );
    }
    if (kind !== 'test') {
      fail(
        'http://localhost is accepted only for test keys: create a test key for local development, or register your site as https://host',
      );
    }
  }
  return url.origin;
}

// The URL parser silently drops tabs and newlines inside a URL; refuse them instead.
function hasControlCharacter(s: string): boolean {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x20 || c === 0x7f) return true;
  }
  return false;
}

function fail(why: string): never {
  throw new HeraldError('invalid_field', `domain ${why}`, { field: 'domain' });
}
