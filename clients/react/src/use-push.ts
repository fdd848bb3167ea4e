import type { HeraldError } from '@herald/sdk';
import { useCallback, useEffect, useRef, useState } from 'react';

/** Options of {@link usePush}: the bell's key, user and endpoints, and the app's service worker. */
export interface UsePushOptions {
  /** A web API key whose registered domain is this page's origin (the bell's `apikey`). */
  apikey: string;
  /** The signed-in user's id: a UUID v4 (the bell's `userID`). */
  userID: string;
  /** Where the app serves `@herald/sdk/sw`, e.g. `/herald-sw.js`. */
  serviceWorker: string;
  /** The worker's scope. Default: the browser's (the script's directory). */
  scope?: string;
  /** Where ingress-api listens (self-hosting). Default the SDK's. */
  baseUrl?: string;
  /** The recipient token, for a key that requires one. Prefer `getToken`. */
  token?: string;
  /** Asked for a fresh recipient token before each request, for a key that requires one. */
  getToken?: () => Promise<string>;
  /** Give up after this many ms (the SDK's `timeoutMs`). Default 30000; 1 to 300000. */
  timeoutMs?: number;
}

/** What {@link usePush} gives: state to render a switch from, and the two actions. */
export interface PushControl {
  /**
   * Whether this browser can receive push here: a secure context with service workers, the Push
   * API and notifications. False on the server and in the first render.
   */
  pushSupported: boolean;
  /** Whether this browser holds a push subscription and notifications are allowed. */
  pushEnabled: boolean;
  /** An `enablePush` or `disablePush` is under way. */
  pushPending: boolean;
  /**
   * Why the last `enablePush` or `disablePush` failed: a HeraldError from `@herald/sdk/push`
   * (`permission_denied`, `push_unsupported`, `push_unavailable`, `timeout`, or Herald's refusal).
   */
  pushError: HeraldError | undefined;
  /** Asks for permission (call it from a click) and subscribes; resolves true once enabled. */
  enablePush(): Promise<boolean>;
  /** Ends this browser's subscription; resolves true once disabled. */
  disablePush(): Promise<boolean>;
}

/**
 * The bell's opt-in "enable notifications" switch, headless: state and actions for a button the
 * app renders where it likes (in the bell's dropdown, a settings page). `@herald/sdk/push` is
 * loaded only when `enablePush` or `disablePush` is called, so an app that never calls them (or
 * never imports this hook) ships none of it. docs/sdk.md, "Push in 5 minutes".
 */
export function usePush(options: UsePushOptions): PushControl {
  const [pushSupported, setSupported] = useState(false);
  const [pushEnabled, setEnabled] = useState(false);
  const [pushPending, setPending] = useState(false);
  const [pushError, setError] = useState<HeraldError>();
  // The latest options, read when an action runs: a new getToken each render changes nothing.
  const latest = useRef(options);
  latest.current = options;
  const { scope } = options;

  useEffect(() => {
    let live = true;
    const supported = canPush();
    setSupported(supported);
    if (supported)
      void subscribed(scope).then(
        (has) => live && setEnabled(has),
        () => undefined,
      );
    return () => {
      live = false;
    };
  }, [scope]);

  const act = useCallback(async (enable: boolean): Promise<boolean> => {
    const o = latest.current;
    setPending(true);
    setError(undefined);
    try {
      const { HeraldPush } = await import('@herald/sdk/push');
      const push = new HeraldPush({
        apiKey: o.apikey,
        client: 'web',
        ...(o.baseUrl ? { baseUrl: o.baseUrl } : {}),
        ...(o.getToken ? { getToken: o.getToken } : o.token ? { token: o.token } : {}),
      });
      const common = {
        recipient: o.userID,
        ...(o.scope ? { scope: o.scope } : {}),
        ...(o.timeoutMs ? { timeoutMs: o.timeoutMs } : {}),
      };
      if (enable) await push.subscribe({ ...common, serviceWorker: o.serviceWorker });
      else await push.unsubscribe(common);
      setEnabled(enable);
      return true;
    } catch (err) {
      setError(err as HeraldError);
      return false;
    } finally {
      setPending(false);
    }
  }, []);

  return {
    pushSupported,
    pushEnabled,
    pushPending,
    pushError,
    enablePush: useCallback(() => act(true), [act]),
    disablePush: useCallback(() => act(false), [act]),
  };
}

/** HeraldPush.supported(), without loading `@herald/sdk/push` to ask. */
function canPush(): boolean {
  const g = globalThis as { isSecureContext?: boolean; PushManager?: unknown };
  return (
    g.isSecureContext === true &&
    typeof navigator !== 'undefined' &&
    'serviceWorker' in navigator &&
    typeof g.PushManager === 'function' &&
    typeof Notification === 'function'
  );
}

/** Whether this browser already holds a subscription under `scope`, with permission. */
async function subscribed(scope: string | undefined): Promise<boolean> {
  if (Notification.permission !== 'granted') return false;
  const registration = await navigator.serviceWorker.getRegistration(scope);
  return (await registration?.pushManager.getSubscription()) != null;
}
