import { useEffect, useRef, useState, useSyncExternalStore } from 'react';
import type { BellHub, HubConfig, Snapshot } from './bell-hub.js';
import { acquireHub } from './hub.js';
import { EMPTY_STATE } from './persisted.js';

/** What renders before the hub exists: on the server, and in the browser's first render. */
const INITIAL: Snapshot = /* @__PURE__ */ Object.freeze({
  state: EMPTY_STATE,
  connection: 'disconnected',
});
const noSubscription = () => () => {};

/** The bell's token props (NotificationBellProps). */
interface TokenProps {
  token?: string | undefined;
  getToken?: (() => Promise<string>) | undefined;
}
const initial = () => INITIAL;

/**
 * The tab's hub for this user and key, acquired in an effect (never during render, so server
 * rendering touches no window), and its snapshot. A new userID or key releases the old hub
 * (closing its socket) and acquires another.
 */
export function useBell(config: Omit<HubConfig, 'getToken'> & TokenProps): {
  hub: BellHub | undefined;
  snapshot: Snapshot;
} {
  const [hub, setHub] = useState<BellHub>();
  const { apikey, userID, baseUrl, wsUrl } = config;
  // The latest token props, read when the SDK asks: a new getToken each render opens no socket.
  const tokens = useRef<TokenProps>(config);
  tokens.current = config;
  const withToken = config.token !== undefined || config.getToken !== undefined;
  useEffect(() => {
    const getToken = withToken
      ? () => {
          const { token, getToken: get } = tokens.current;
          return get ? get() : Promise.resolve(token ?? '');
        }
      : undefined;
    const held = acquireHub({ apikey, userID, baseUrl, wsUrl, getToken });
    setHub(held.hub);
    return held.release;
  }, [apikey, userID, baseUrl, wsUrl, withToken]);
  const snapshot = useSyncExternalStore(
    hub?.subscribe ?? noSubscription,
    hub?.getSnapshot ?? initial,
    initial,
  );
  return { hub, snapshot };
}
