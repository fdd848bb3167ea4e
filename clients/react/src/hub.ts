import { BellHub, type HubConfig } from './bell-hub.js';

const hubs = new Map<
  string,
  { hub: BellHub; refs: number; disposal?: ReturnType<typeof setTimeout> }
>();

/**
 * The tab's hub for this user and key, shared by every bell that asks. Releasing the last
 * reference disposes it after the current task, so React StrictMode's unmount-and-remount (and a
 * bell moving in the tree) keeps the one socket instead of closing and reopening it.
 */
export function acquireHub(config: HubConfig): { hub: BellHub; release: () => void } {
  const id = JSON.stringify([
    config.apikey,
    config.userID,
    config.baseUrl,
    config.wsUrl,
    config.getToken !== undefined,
  ]);
  let entry = hubs.get(id);
  if (!entry) {
    const hub = new BellHub(config);
    entry = { hub, refs: 0 };
    hubs.set(id, entry);
    hub.start();
  }
  const held = entry;
  if (held.disposal !== undefined) clearTimeout(held.disposal);
  held.disposal = undefined;
  held.refs++;
  let released = false;
  return {
    hub: held.hub,
    release: () => {
      if (released) return;
      released = true;
      if (--held.refs > 0) return;
      held.disposal = setTimeout(() => {
        if (held.refs > 0) return;
        hubs.delete(id);
        held.hub.dispose();
      }, 0);
    },
  };
}
