import type { Backoff, BackoffOptions } from './backoff.js';
import { DEVICE_ID, type DeviceStore, deviceId } from './device.js';
import type { Logger } from './logger.js';
import type { Client } from './types.js';
import type { WebSocketConstructor } from './websocket.js';

/** `new Herald(options)`. Only `apiKey` and `client` are required. */
export interface HeraldOptions {
  /** Your Herald API key. Required. Sent in the connect URL and the notify body; never logged. */
  apiKey: string;
  /** `'web'` or `'mobile'`, as the key was issued. Required. */
  client: Client;
  /**
   * Where ingress-api listens (`notify` POSTs to `{baseUrl}/notify`). Default
   * `'https://localhost:8443'`, the `make dev` stack.
   */
  baseUrl?: string;
  /**
   * Where socket-edge listens (sockets open `{wsUrl}/ws/connect`). Default: `baseUrl` with
   * https→wss (one origin behind a proxy) when `baseUrl` is given, else `'wss://localhost:8444'`.
   */
  wsUrl?: string;
  /**
   * The WebSocket constructor. Default: the global `WebSocket` (browsers, React Native, Node >= 22),
   * else the `ws` package (Node 20/21), loaded on first subscribe.
   */
  WebSocket?: WebSocketConstructor;
  /** The fetch used by `notify`. Default: the global `fetch`. */
  fetch?: typeof fetch;
  /** Reconnect timing; see {@link BackoffOptions} for each default. */
  backoff?: BackoffOptions;
  /** Where the SDK reports connects, closes and retries. Default: none (silent). */
  logger?: Logger;
  /** A socket not open within this many ms is dropped and retried. Default 10000. */
  connectTimeoutMs?: number;
  /**
   * A socket counts as connected once it stayed open this many ms without a refusal (or as soon
   * as an event arrives), so a refused socket never shows as connected. Default 1000.
   */
  acceptDelayMs?: number;
  /** `notify` resolves with a `timeout` failure after this many ms. Default 10000. */
  notifyTimeoutMs?: number;
  /** How many recent event ids each subscription remembers to drop duplicates. Default 1000. */
  dedupCapacity?: number;
  /**
   * The recipient token, for a key that requires one (minted by your server: HS256 with the key's
   * signing secret, `sub` the recipient). Fixed: once it expires the socket is refused; prefer
   * `getToken`. Never logged.
   */
  token?: string;
  /**
   * Asked for a recipient token before each connect and again before the current one expires
   * (sent in-band, so the socket stays open), with the recipient it is for. A failure is reported
   * through `onError` (`token_unavailable`) and retried. Never logged.
   */
  getToken?: (recipient: string) => Promise<string>;
  /**
   * This installation's device id, sent on connect so that every device of a recipient gets each
   * queued event once: 1 to 64 characters of A-Z, a-z, 0-9, _ and -. Default: one made on first
   * use and kept in `deviceStore`. `false` sends none (the recipient's sockets then share one queue).
   */
  device?: string | false;
  /**
   * Where the made device id is kept. Default: localStorage (per origin, shared by its tabs),
   * else memory (one per process).
   */
  deviceStore?: DeviceStore;
}

export interface Resolved {
  apiKey: string;
  client: Client;
  baseUrl: string;
  wsUrl: string;
  WebSocket: WebSocketConstructor | undefined;
  fetch: typeof fetch | undefined;
  backoff: Backoff;
  logger: Logger | undefined;
  connectTimeoutMs: number;
  acceptDelayMs: number;
  notifyTimeoutMs: number;
  dedupCapacity: number;
  /** options.getToken, or options.token as one; undefined for a key without tokens. */
  getToken: ((recipient: string) => Promise<string>) | undefined;
  /** The device id sent on connect; undefined for none. */
  device: string | undefined;
}

export const DEFAULTS = {
  baseUrl: 'https://localhost:8443',
  wsUrl: 'wss://localhost:8444',
  backoff: { baseMs: 1000, capMs: 60_000, stableMs: 10_000 },
  connectTimeoutMs: 10_000,
  acceptDelayMs: 1000,
  notifyTimeoutMs: 10_000,
  dedupCapacity: 1000,
} as const;

const LOOPBACK = new Set(['localhost', '127.0.0.1', '[::1]']);

/** Checks every option and fills in defaults; throws a TypeError naming the option and the fix. */
export function resolveOptions(o: HeraldOptions): Resolved {
  if (typeof o !== 'object' || o === null) {
    throw new TypeError('Herald: pass an options object: new Herald({ apiKey, client })');
  }
  if (typeof o.apiKey !== 'string' || o.apiKey === '') {
    throw new TypeError('Herald: options.apiKey is required: your Herald API key, as a string');
  }
  checkClient(o.client, 'options.client');
  const baseUrl = checkUrl(o.baseUrl ?? DEFAULTS.baseUrl, 'options.baseUrl', 'https:', 'http:');
  const wsUrl = checkUrl(
    o.wsUrl ?? (o.baseUrl === undefined ? DEFAULTS.wsUrl : baseUrl.replace(/^http/, 'ws')),
    'options.wsUrl',
    'wss:',
    'ws:',
  );
  for (const name of ['WebSocket', 'fetch'] as const) {
    if (o[name] !== undefined && typeof o[name] !== 'function') {
      throw new TypeError(`Herald: options.${name} must be a ${name} function, or left out`);
    }
  }
  const b = o.backoff ?? {};
  const backoff: Backoff = {
    baseMs: positive(b.baseMs, DEFAULTS.backoff.baseMs, 'options.backoff.baseMs', 1),
    capMs: positive(b.capMs, DEFAULTS.backoff.capMs, 'options.backoff.capMs', 1),
    stableMs: positive(b.stableMs, DEFAULTS.backoff.stableMs, 'options.backoff.stableMs', 0),
  };
  // At most a day: setTimeout fires at once past 2^31-1 ms, which would make every wait none.
  if (backoff.capMs < backoff.baseMs || backoff.capMs > 86_400_000) {
    throw new TypeError(
      `Herald: options.backoff.capMs (${backoff.capMs}) must be at least options.backoff.baseMs (${backoff.baseMs}) and at most 86400000 (a day)`,
    );
  }
  if (o.logger !== undefined && (typeof o.logger !== 'object' || o.logger === null)) {
    throw new TypeError(
      'Herald: options.logger must be an object with debug/warn/error methods, e.g. console',
    );
  }
  const connectTimeoutMs = positive(
    o.connectTimeoutMs,
    DEFAULTS.connectTimeoutMs,
    'options.connectTimeoutMs',
    1,
  );
  const acceptDelayMs = positive(
    o.acceptDelayMs,
    DEFAULTS.acceptDelayMs,
    'options.acceptDelayMs',
    0,
  );
  const notifyTimeoutMs = positive(
    o.notifyTimeoutMs,
    DEFAULTS.notifyTimeoutMs,
    'options.notifyTimeoutMs',
    1,
  );
  const dedupCapacity = positive(
    o.dedupCapacity,
    DEFAULTS.dedupCapacity,
    'options.dedupCapacity',
    1,
  );
  const device = o.device === false ? undefined : (o.device ?? deviceId(o.deviceStore));
  if (device !== undefined && !DEVICE_ID.test(device)) {
    throw new TypeError('Herald: options.device must be 1-64 of [A-Za-z0-9_-], or false');
  }
  return {
    device,
    getToken: tokenSource(o),
    apiKey: o.apiKey,
    client: o.client,
    baseUrl,
    wsUrl,
    WebSocket: o.WebSocket,
    fetch: o.fetch,
    backoff,
    logger: o.logger,
    connectTimeoutMs,
    acceptDelayMs,
    notifyTimeoutMs,
    dedupCapacity,
  };
}

/** options.getToken, or a fixed options.token as one. */
function tokenSource({ token, getToken }: HeraldOptions): Resolved['getToken'] {
  if (
    getToken === undefined ? token !== undefined && !token : typeof getToken !== 'function' || token
  ) {
    throw new TypeError(
      'Herald: pass options.token (a JWT) or options.getToken (a function), not both',
    );
  }
  return getToken ?? (token ? () => Promise.resolve(token) : undefined);
}

export function checkClient(value: unknown, name: string): asserts value is Client {
  if (value !== 'web' && value !== 'mobile') {
    throw new TypeError(`Herald: ${name} must be 'web' or 'mobile', matching your API key`);
  }
}

function positive(value: number | undefined, fallback: number, name: string, min: number): number {
  if (value === undefined) return fallback;
  if (!Number.isSafeInteger(value) || value < min) {
    throw new TypeError(
      `Herald: ${name} must be an integer >= ${min} (milliseconds or a count), got ${String(value)}`,
    );
  }
  return value;
}

/**
 * The key travels in the connect URL and the notify body, so plain http/ws is refused except on
 * loopback (a local stack run with TLS_DISABLED). Returns the URL without a trailing slash.
 */
function checkUrl(value: unknown, name: string, secure: string, plain: string): string {
  let url: URL;
  try {
    url = new URL(String(value));
  } catch {
    throw new TypeError(
      `Herald: ${name} must be an absolute URL such as ${secure}//herald.example.com`,
    );
  }
  if (url.protocol !== secure && !(url.protocol === plain && LOOPBACK.has(url.hostname))) {
    throw new TypeError(
      `Herald: ${name} must use ${secure}// (${plain}// only for localhost), got ${url.protocol}//`,
    );
  }
  if (url.search !== '' || url.hash !== '') {
    throw new TypeError(`Herald: ${name} must not carry a query or fragment`);
  }
  return url.href.replace(/\/+$/, '');
}
