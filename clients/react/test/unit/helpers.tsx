import { randomUUID } from 'node:crypto';
import { act, type ReactNode } from 'react';
import { createRoot, type Root } from 'react-dom/client';
import { vi } from 'vitest';
import { type FakeSocket, fakeWebSocket } from '../../../sdk/test/unit/fake-websocket.js';

(globalThis as { IS_REACT_ACT_ENVIRONMENT?: boolean }).IS_REACT_ACT_ENVIRONMENT = true;

export const KEY = 'hk_test_unit-test-secret-key-0123456789';
export const uuid = (): string => randomUUID();

/**
 * A minimal in-memory Web Locks manager (one tab's view: requests for a name are granted in
 * order, one at a time), so the bell leads at once in unit tests. Real locks across real tabs
 * are exercised in Chromium by the browser tests.
 */
export function fakeLocks(): LockManager {
  const queues = new Map<string, Array<() => void>>();
  const held = new Set<string>();
  const next = (name: string) => {
    const q = queues.get(name);
    const grant = q?.shift();
    if (grant) grant();
  };
  return {
    request(name: string, options: LockOptions, callback: LockGrantedCallback<unknown>) {
      return new Promise((resolve, reject) => {
        const grant = () => {
          held.add(name);
          Promise.resolve(callback({ name, mode: 'exclusive' } as Lock)).then((v) => {
            held.delete(name);
            next(name);
            resolve(v);
          }, reject);
        };
        options.signal?.addEventListener('abort', () => {
          const q = queues.get(name) ?? [];
          const i = q.indexOf(grant);
          if (i >= 0) q.splice(i, 1);
          reject(new DOMException('aborted', 'AbortError'));
        });
        if (!held.has(name)) grant();
        else queues.set(name, [...(queues.get(name) ?? []), grant]);
      });
    },
    query: () => Promise.resolve({ held: [], pending: [] }),
  } as unknown as LockManager;
}

/** Fake sockets, locks and fetch in place of the browser's, for one test. */
export function installFakes(): { sockets: FakeSocket[]; last(): FakeSocket } {
  const fake = fakeWebSocket();
  vi.stubGlobal('WebSocket', fake.WebSocket);
  // The SDK probes a socket URL that failed before opening: no network in unit tests.
  vi.stubGlobal('fetch', () => Promise.reject(new TypeError('fetch failed')));
  Object.defineProperty(globalThis.navigator, 'locks', {
    value: fakeLocks(),
    configurable: true,
  });
  return fake;
}

export interface Mounted {
  container: HTMLDivElement;
  render(ui: ReactNode): Promise<void>;
  unmount(): Promise<void>;
}

export async function mount(ui: ReactNode): Promise<Mounted> {
  const container = document.createElement('div');
  document.body.append(container);
  const root: Root = createRoot(container);
  const mounted: Mounted = {
    container,
    render: (next) => act(async () => root.render(next)),
    unmount: async () => {
      await act(async () => root.unmount());
      container.remove();
      // The hub is disposed one task after its last bell unmounts.
      await act(() => new Promise((r) => setTimeout(r, 5)));
    },
  };
  await mounted.render(ui);
  return mounted;
}

/** Polls `check` (inside act) until it stops throwing; rethrows its last error after timeoutMs. */
export async function waitFor<T>(check: () => T, timeoutMs = 5000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return check();
    } catch (err) {
      if (Date.now() > deadline) throw err;
      await act(() => new Promise((r) => setTimeout(r, 10)));
    }
  }
}

/** The socket opens and its first event proves acceptance (no accept delay to wait out). */
export async function deliver(sock: FakeSocket, id: string, payload: unknown): Promise<void> {
  await act(async () => {
    if (sock.readyState === 0) sock.open();
    sock.event(id, payload);
  });
}

export const bell = (c: HTMLElement) => {
  const b = c.querySelector<HTMLButtonElement>('button[aria-haspopup]');
  if (!b) throw new Error('no bell button');
  return b;
};

export const click = (el: Element) =>
  act(async () => {
    el.dispatchEvent(new MouseEvent('click', { bubbles: true }));
  });

export const key = (el: Element, k: string) =>
  act(async () => {
    el.dispatchEvent(new KeyboardEvent('keydown', { key: k, bubbles: true }));
  });
