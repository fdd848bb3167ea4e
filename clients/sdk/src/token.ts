import { HeraldError } from './errors.js';

/** Refresh a token this long before it expires at most, ms (half its life when that is shorter). */
const REFRESH_LEAD_MS = 60_000;

/**
 * When to ask for a fresh token: a minute before the token's `exp`, or halfway through what is
 * left of its life when that is shorter; undefined when it carries no readable `exp` (the edge
 * refuses those anyway). The token is only decoded here, never verified: the edge does that.
 */
export function refreshDelay(token: string, now: number): number | undefined {
  const exp = expiryOf(token);
  if (exp === undefined) return undefined;
  const left = exp - now;
  return Math.max(0, left - Math.min(REFRESH_LEAD_MS, left / 2));
}

function expiryOf(token: string): number | undefined {
  const part = token.split('.')[1];
  if (part === undefined) return undefined;
  try {
    const json = atob(part.replace(/-/g, '+').replace(/_/g, '/'));
    const exp = (JSON.parse(json) as { exp?: unknown }).exp;
    return typeof exp === 'number' && Number.isFinite(exp) ? exp * 1000 : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Where a connection's recipient tokens come from (options.getToken): one before each connect,
 * then a fresh one before each expires, handed to `send` (the in-band token frame). Tokens are
 * never logged.
 */
export class TokenSupply {
  readonly #get: (recipient: string) => Promise<string>;
  readonly #recipient: string;
  #timer: ReturnType<typeof setTimeout> | undefined;

  constructor(get: (recipient: string) => Promise<string>, recipient: string) {
    this.#get = get;
    this.#recipient = recipient;
  }

  /** A token; rejects with `token_unavailable` when getToken failed or gave nothing. */
  async next(): Promise<string> {
    let token: unknown;
    try {
      token = await this.#get(this.#recipient);
    } catch (err) {
      throw tokenError(err);
    }
    if (typeof token !== 'string' || token === '') throw tokenError('it gave no token string');
    return token;
  }

  /**
   * Before `token` expires, asks for the next and gives it to `send`, which answers whether the
   * socket took it (then the next refresh is scheduled). A failure goes to `onError`: the edge
   * then closes the socket 4401 token_expired, and the reconnect asks again.
   */
  schedule(token: string, send: (fresh: string) => boolean, onError: (e: HeraldError) => void) {
    this.cancel();
    const delay = refreshDelay(token, Date.now());
    if (delay === undefined) return;
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      this.next().then(
        (fresh) => {
          if (send(fresh)) this.schedule(fresh, send, onError);
        },
        (err: HeraldError) => onError(err),
      );
    }, delay);
  }

  cancel(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
  }
}

/** options.getToken failed or gave nothing: the app's to fix; the SDK retries meanwhile. */
function tokenError(err: unknown): HeraldError {
  return new HeraldError(
    'token_unavailable',
    `options.getToken failed (${err instanceof Error ? err.message : String(err)}): it must resolve to the recipient token your server minted; retrying with backoff`,
    { field: 'getToken', cause: err },
  );
}
