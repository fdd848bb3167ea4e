/**
 * @herald/sdk/push: Web Push for browsers, so that a recipient whose tab is closed still hears of
 * events no socket proved (issue 40, docs/sdk.md "Push in 5 minutes"). A separate entry, not a
 * property of `Herald`: apps that never import it ship none of it (the core bundle's budget).
 */
import { HeraldError } from './errors.js';
import type { HeraldOptions, Resolved } from './options.js';
import { resolveOptions } from './options.js';
import { check, pushError, within } from './push-deadline.js';
import { checkDevice, type DeviceRegistration } from './push-device.js';
import { deleteSubscription, postDevice, postSubscription, vapidPublicKey } from './push-http.js';

export type { DeviceRegistration };
export { HeraldError };

/** `push.subscribe(options)`. */
export interface PushSubscribeOptions {
  /** The recipient (UUID v4) whose events this browser should be notified of. Required. */
  recipient: string;
  /**
   * The URL of the service worker script, served by your app from your origin: a copy of
   * `@herald/sdk/sw` (`herald-sw.js`), or your own worker that `importScripts` it. Required.
   */
  serviceWorker: string;
  /** The service worker's scope. Default: the browser's (the script's directory). */
  scope?: string;
  /**
   * Give up (`timeout`) after this many ms: the browser's push service may never answer (offline,
   * or blocked), and `pushManager.subscribe` then waits forever. Default 30000; 1 to 300000.
   */
  timeoutMs?: number;
}

/** `push.unsubscribe(options)`. */
export interface PushUnsubscribeOptions {
  /** The recipient the subscription was registered for. Required. */
  recipient: string;
  /** The scope given to `subscribe`, if any. Default: the page's own registration. */
  scope?: string;
  /** As for `subscribe`. Default 30000; 1 to 300000. */
  timeoutMs?: number;
}

/**
 * Web Push subscriptions of this browser, registered with Herald. Takes the same options as
 * `new Herald(options)` (key, client, baseUrl, token or getToken, device), checked the same way.
 */
export class HeraldPush {
  readonly #options: Resolved;
  /** Subscription ids Herald gave, by endpoint, so that `unsubscribe` need not ask again. */
  readonly #ids = new Map<string, string>();

  /** Throws a TypeError naming the first bad option, as `new Herald` does. */
  constructor(options: HeraldOptions) {
    this.#options = resolveOptions(options);
  }

  /**
   * Whether this browser can subscribe here: a secure context (https, or http://localhost) with
   * service workers, the Push API and notifications. False in Node and React Native.
   */
  static supported(): boolean {
    const g = globalThis as { isSecureContext?: boolean; PushManager?: unknown };
    return (
      g.isSecureContext === true &&
      typeof navigator !== 'undefined' &&
      'serviceWorker' in navigator &&
      typeof g.PushManager === 'function' &&
      typeof Notification === 'function'
    );
  }

  /**
   * Registers `serviceWorker`, subscribes this browser to the push service with the account's
   * VAPID key (asking the user for permission when not yet given: call it from a click) and
   * registers the subscription with Herald for `recipient`, with the key, client, device and a
   * fresh recipient token. Resolves with Herald's id of the subscription; subscribing again
   * returns the same id. Rejects with a HeraldError: `push_unsupported`, `permission_denied`,
   * `push_unavailable` (the browser's push service failed), `timeout`, or Herald's own refusal
   * (`invalid_api_key`, `token_required`, ...).
   */
  async subscribe(opts: PushSubscribeOptions): Promise<{ id: string }> {
    check(opts, 'subscribe');
    if (typeof opts.serviceWorker !== 'string' || opts.serviceWorker === '')
      throw new TypeError(
        "Herald: push.subscribe needs serviceWorker: the URL your app serves @herald/sdk/sw at, e.g. '/herald-sw.js'",
      );
    return within(opts.timeoutMs, 'subscribe', async (signal) => {
      supportedOrThrow();
      if (Notification.permission === 'denied') throw denied();
      const [key, registration] = await Promise.all([
        vapidPublicKey(this.#options, signal),
        navigator.serviceWorker
          .register(opts.serviceWorker, opts.scope ? { scope: opts.scope } : undefined)
          .then(activated),
      ]);
      const sub = await browserSubscription(registration.pushManager, key);
      const json = sub.toJSON();
      const id = await postSubscription(this.#options, await this.#caller(opts), json, signal);
      this.#ids.set(sub.endpoint, id);
      return { id };
    });
  }

  /**
   * Ends this browser's subscription: the browser's (no more pushes arrive) and Herald's
   * (`DELETE /push/subscriptions/{id}`). Resolves false when there was none.
   */
  async unsubscribe(opts: PushUnsubscribeOptions): Promise<boolean> {
    check(opts, 'unsubscribe');
    return within(opts.timeoutMs, 'unsubscribe', async (signal) => {
      supportedOrThrow();
      const registration = await navigator.serviceWorker.getRegistration(opts.scope);
      const sub = await registration?.pushManager.getSubscription();
      if (!sub) return false;
      const caller = await this.#caller(opts);
      // After a reload the id is not in memory: POSTing the same subscription again answers it.
      const id =
        this.#ids.get(sub.endpoint) ??
        (await postSubscription(this.#options, caller, sub.toJSON(), signal));
      await sub.unsubscribe();
      this.#ids.delete(sub.endpoint);
      await deleteSubscription(this.#options, caller, id, signal);
      return true;
    });
  }

  /**
   * Registers a native app's device token for `recipient`: an FCM registration token (Android, or
   * iOS through Firebase) or an APNs device token (hex), which the app obtained itself (React
   * Native: `@react-native-firebase/messaging`'s `getToken()`, or `getAPNSToken()`). Sent with
   * the key, client, device and a fresh recipient token (`recipient_token`). Resolves with
   * Herald's id of the registration, the same id for a token already registered. Call it again
   * whenever the provider hands the app a new token. Throws a TypeError naming the bad field;
   * rejects with a HeraldError: Herald's refusal (`invalid_api_key`, `token_required`, ...),
   * `network_error` or `timeout`.
   */
  async registerDevice(opts: DeviceRegistration): Promise<{ id: string }> {
    check(opts, 'registerDevice');
    const device = checkDevice(opts) ?? this.#options.device;
    return within(
      opts.timeoutMs,
      'registerDevice',
      async (signal) => {
        const caller = await this.#caller(opts);
        const id = await postDevice(this.#options, caller, { ...opts, device }, signal);
        return { id };
      },
      'Herald',
    );
  }

  /**
   * Deletes a registration `registerDevice` made (`DELETE /push/subscriptions/{id}`): Herald
   * pushes no more to that device token, e.g. when the user signs out. `recipient` is the one it
   * was registered for. Rejects as `registerDevice` does (`not_found` for an unknown id).
   */
  async unregisterDevice(
    id: string,
    opts: { recipient: string; timeoutMs?: number },
  ): Promise<void> {
    if (typeof id !== 'string' || !/^[\w-]{1,64}$/.test(id))
      throw new TypeError(
        'Herald: push.unregisterDevice needs id: the id registerDevice resolved with',
      );
    check(opts, 'unregisterDevice');
    await within(
      opts.timeoutMs,
      'unregisterDevice',
      async (signal) => deleteSubscription(this.#options, await this.#caller(opts), id, signal),
      'Herald',
    );
  }

  /** The recipient and, for a key that requires tokens, a fresh token (options.getToken). */
  async #caller(opts: { recipient: string }) {
    const recipient = opts.recipient.toLowerCase();
    let token: string | undefined;
    try {
      token = await this.#options.getToken?.(recipient);
    } catch (err) {
      throw new HeraldError('token_unavailable', `options.getToken failed: ${String(err)}`, {
        field: 'getToken',
        cause: err,
      });
    }
    return { recipient, token };
  }
}

const denied = (cause?: unknown) =>
  pushError(
    'permission_denied',
    'The user (or the browser) denied notifications for this site: push cannot be turned on until they allow them in the site settings',
    'refused',
    cause,
  );

function supportedOrThrow(): void {
  if (!HeraldPush.supported())
    throw pushError(
      'push_unsupported',
      'This browser cannot receive Web Push here: it needs a secure context (https, or http://localhost), service workers, the Push API and notifications',
      'runtime',
    );
}

/** The registration once its worker is active: the Push API refuses to subscribe before. */
async function activated(registration: ServiceWorkerRegistration) {
  const worker = registration.installing ?? registration.waiting;
  if (!registration.active && worker) {
    await new Promise<void>((resolve, reject) => {
      const onChange = () => {
        if (worker.state === 'activated') resolve();
        else if (worker.state === 'redundant')
          reject(pushError('push_unavailable', 'The service worker failed to install', 'runtime'));
      };
      worker.addEventListener('statechange', onChange);
      onChange();
    });
  }
  return registration;
}

/**
 * This browser's subscription under `key`: the existing one when it was made with that key, else
 * a new one (one made with another key, an account's old VAPID key, is ended first: the Push API
 * refuses a second).
 */
async function browserSubscription(pm: PushManager, key: string): Promise<PushSubscription> {
  const applicationServerKey = fromBase64Url(key);
  const existing = await pm.getSubscription();
  if (existing) {
    const had = existing.options.applicationServerKey;
    if (had && sameBytes(new Uint8Array(had), applicationServerKey)) return existing;
    await existing.unsubscribe();
  }
  try {
    return await pm.subscribe({ userVisibleOnly: true, applicationServerKey });
  } catch (err) {
    const name = (err as { name?: string }).name;
    if (name === 'NotAllowedError' || Notification.permission === 'denied') throw denied(err);
    throw pushError(
      'push_unavailable',
      `The browser's push service refused to subscribe: ${String(err)}`,
      'unavailable',
      err,
    );
  }
}

function fromBase64Url(s: string): Uint8Array<ArrayBuffer> {
  const bin = atob(s.replace(/-/g, '+').replace(/_/g, '/'));
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
}

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}
