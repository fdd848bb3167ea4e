/** The session cookie's name. */
export const SESSION_COOKIE = 'herald_session';

/**
 * The session cookie: out of scripts' reach (HttpOnly), over TLS only (Secure), never sent on a
 * cross-site request (SameSite=Strict), for every path of the API.
 */
export function sessionCookie(token: string, maxAgeMs: number): string {
  const maxAge = Math.max(0, Math.floor(maxAgeMs / 1000));
  return `${SESSION_COOKIE}=${token}; Path=/; Max-Age=${maxAge}; HttpOnly; Secure; SameSite=Strict`;
}

/** Tells the browser to drop the session cookie (logout). */
export function clearedSessionCookie(): string {
  return `${SESSION_COOKIE}=; Path=/; Max-Age=0; HttpOnly; Secure; SameSite=Strict`;
}

/** A cookie's value from a Cookie header, or undefined. The first one wins. */
export function readCookie(header: string | undefined, name: string): string | undefined {
  if (!header) return undefined;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq < 0) continue;
    if (part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}
