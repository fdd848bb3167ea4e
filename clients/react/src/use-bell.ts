import { useEffect, useState, useSyncExternalStore } from 'react';
import { acquireHub, type BellHub, type HubConfig, type Snapshot } from './hub.js';
import { EMPTY_STATE } from './persisted.js';

/** What renders before the hub exists: on the server, and in the browser's first render. */
const INITIAL: Snapshot = /* @__PURE__ */ Object.freeze({
  state: EMPTY_STATE,
  connection: 'disconnected',
});
const noSubscription = () => () => {};
const initial = () => INITIAL;

/**
 * The tab's hub for this user and key, acquired in an effect (never during render, so server
 * rendering touches no window), and its snapshot. A new userID or key releases the old hub
 * (closing its socket) and acquires another.
 */
export function useBell(config: HubConfig): { hub: BellHub | undefined; snapshot: Snapshot } {
  const [hub, setHub] = useState<BellHub>();
  const { apikey, userID, baseUrl, wsUrl } = config;
  useEffect(() => {
    const held = acquireHub({ apikey, userID, baseUrl, wsUrl });
    setHub(held.hub);
    return held.release;
  }, [apikey, userID, baseUrl, wsUrl]);
  const snapshot = useSyncExternalStore(
    hub?.subscribe ?? noSubscription,
    hub?.getSnapshot ?? initial,
    initial,
  );
  return { hub, snapshot };
}
