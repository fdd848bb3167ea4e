import { HeraldError } from './errors.js';

/**
 * When to ask for a fresh token: a minute before the token's `exp`, or halfway through what is
 * left of its life when that is shorter; undefined without a readable `exp` (the edge refuses
 * those anyway). The token is only decoded here, never verified: the edge does that.
 */
export function refreshDelay(token: string, now: number): number | undefined {
  try {
    const part = (token.split('.')[1] ?? '').replace(/-/g, '+').replace(/_/g, '/');
    const left = (JSON.parse(atob(part)) as { exp: number }).exp * 1000 - now;
    return Number.isFinite(left) ? Math.max(0, left - Math.min(60_000, left / 2)) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Where a connection's recipient tokens come from (options.getToken): one before each connect,
 * then a fresh one before each expires, handed to `send` (the in-band token frame), which answers
 * whether the socket took it. A failure is `token_unavailable`: at connect the SDK retries with
 * backoff; before expiry it goes to `onError`, the edge closes the socket 4401 token_expired, and
 * the reconnect asks again. Tokens are never logged.
 */
export class TokenSupply {
  #timer: ReturnType<typeof setTimeout> | undefined;

  constructor(
    readonly get: (recipient: string) => Promise<string>,
    readonly recipient: string,
  ) {}

  async next(): Promise<string> {
    let token: unknown;
    try {
      token = await this.get(this.recipient);
    } catch (err) {
      throw tokenError(err);
    }
    if (typeof token !== 'string' || token === '') throw tokenError('no token');
    return token;
  }

  schedule(token: string, send: (fresh: string) => boolean, onError: (e: HeraldError) => void) {
    this.cancel();
    const delay = refreshDelay(token, Date.now());
    if (delay === undefined) return;
    this.#timer = setTimeout(() => {
      this.next().then((fresh) => send(fresh) && this.schedule(fresh, send, onError), onError);
    }, delay);
  }

  cancel(): void {
    clearTimeout(this.#timer);
  }
}

function tokenError(err: unknown): HeraldError {
  return new HeraldError('token_unavailable', `options.getToken failed: ${String(err)}`, {
    field: 'getToken',
    cause: err,
  });
}
