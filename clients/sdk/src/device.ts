/**
 * Where the SDK keeps this installation's device id (`options.deviceStore`). Each device of a
 * recipient gets every queued event once; the id is what tells the server which device this is.
 */
export interface DeviceStore {
  get(): string | null | undefined;
  set(id: string): void;
}

/** The server's rule for a device id: 1 to 64 characters of A-Z, a-z, 0-9, _ and -. */
export const DEVICE_ID = /^[\w-]{1,64}$/;
const KEY = 'herald.device';
/** Node and other runtimes without localStorage: one id per process. */
let memory: string | undefined;

/**
 * This installation's device id from `store` (default: the origin's localStorage, which every tab
 * shares, else memory), made and stored on first use.
 */
export function deviceId(store: DeviceStore = defaultStore()): string {
  let id = store.get();
  if (!id || !DEVICE_ID.test(id)) {
    id = globalThis.crypto?.randomUUID?.() ?? `${Math.random()}`.slice(2);
    store.set(id);
  }
  return id;
}

function defaultStore(): DeviceStore {
  try {
    const ls = globalThis.localStorage;
    if (ls) return { get: () => ls.getItem(KEY), set: (id) => ls.setItem(KEY, id) };
  } catch {
    // Storage disabled (a privacy mode): an id for this page's life.
  }
  return {
    get: () => memory,
    set: (id) => {
      memory = id;
    },
  };
}
