/**
 * @herald/sdk/sw (dist/herald-sw.js): the service worker that shows Herald's Web Push messages.
 * Serve a copy from your origin and pass its URL to `push.subscribe({ serviceWorker })`, or
 * `importScripts('/herald-sw.js')` from your own worker. A classic script with no imports.
 *
 * - `push`: the message is proto's PushMessage JSON (the newest unproven event's title, body,
 *   url and icon, the ids it stands for, their count, and `tag`, the recipient's collapse key).
 *   One notification per tag: a newer push replaces the shown one and alerts again (`renotify`).
 *   When it stands for several events the body ends with " (+N more)", N = count - 1. A message
 *   that is not such JSON still shows a generic notification: browsers penalise (and Chrome
 *   eventually revokes) push subscriptions whose pushes show nothing.
 * - `notificationclick`: closes it, then focuses a window of this browser already at `url`, or
 *   opens `url` (a path is resolved against the worker's scope; none opens the scope itself).
 */

/** The parts of the service worker scope this file uses (the DOM lib has no worker types). */
interface Scope {
  registration: {
    scope: string;
    showNotification(title: string, options: Record<string, unknown>): Promise<void>;
  };
  clients: {
    matchAll(o: { type: 'window'; includeUncontrolled: boolean }): Promise<WindowClientLike[]>;
    openWindow(url: string): Promise<unknown>;
  };
  addEventListener(type: 'push', fn: (e: PushEventLike) => void): void;
  addEventListener(type: 'notificationclick', fn: (e: ClickEventLike) => void): void;
}
interface WindowClientLike {
  url: string;
  focus(): Promise<unknown>;
}
interface ExtendableEventLike {
  waitUntil(p: Promise<unknown>): void;
}
interface PushEventLike extends ExtendableEventLike {
  data: { text(): string } | null;
}
interface ClickEventLike extends ExtendableEventLike {
  notification: { data: unknown; close(): void };
}

declare const self: Scope;

/** What a message that cannot be read shows (proto's PUSH_DEFAULT_TITLE). */
const GENERIC_TITLE = 'New notification';
const GENERIC_TAG = 'herald';

/** What one notification shows and carries. */
export interface Shown {
  title: string;
  options: {
    body?: string;
    icon?: string;
    tag: string;
    renotify: true;
    data: { url?: string; id?: string; ids?: string[]; count: number; payload?: unknown };
  };
}

const str = (v: unknown): v is string => typeof v === 'string';

/** The notification for a push's text: PushMessage v1 checked by hand (no zod in a worker). */
function shown(text: string | undefined): Shown {
  let m: Record<string, unknown> | undefined;
  try {
    m = JSON.parse(text ?? '');
  } catch {
    m = undefined;
  }
  if (
    !m ||
    typeof m !== 'object' ||
    m.v !== 1 ||
    !str(m.id) ||
    !str(m.title) ||
    m.title === '' ||
    !str(m.tag) ||
    m.tag === '' ||
    !Array.isArray(m.ids) ||
    !m.ids.every(str) ||
    !Number.isInteger(m.count) ||
    (m.count as number) < 1 ||
    [m.body, m.url, m.icon].some((f) => f !== undefined && !str(f))
  ) {
    return {
      title: GENERIC_TITLE,
      options: { tag: GENERIC_TAG, renotify: true, data: { count: 1 } },
    };
  }
  const count = m.count as number;
  const more = count > 1 ? `(+${count - 1} more)` : '';
  const body = [m.body as string | undefined, more].filter(Boolean).join(' ');
  return {
    title: m.title,
    options: {
      ...(body ? { body } : {}),
      ...(m.icon ? { icon: m.icon as string } : {}),
      tag: m.tag,
      renotify: true,
      data: {
        ...(m.url ? { url: m.url as string } : {}),
        id: m.id,
        ids: m.ids as string[],
        count,
        ...(m.payload !== undefined ? { payload: m.payload } : {}),
      },
    },
  };
}

/** Where a click goes: `url` against the scope, http(s) only; else the scope itself. */
function target(url: unknown, scope: string): string {
  try {
    const u = new URL(str(url) ? url : '', scope);
    if (u.protocol === 'https:' || u.protocol === 'http:') return u.href;
  } catch {
    // An unparsable url: the scope.
  }
  return scope;
}

self.addEventListener('push', (event) => {
  let text: string | undefined;
  try {
    text = event.data?.text();
  } catch {
    text = undefined;
  }
  const n = shown(text);
  event.waitUntil(self.registration.showNotification(n.title, n.options));
});

self.addEventListener('notificationclick', (event) => {
  event.notification.close();
  const data = event.notification.data as { url?: unknown } | null;
  const url = target(data?.url, self.registration.scope);
  event.waitUntil(
    self.clients.matchAll({ type: 'window', includeUncontrolled: true }).then((windows) => {
      const open = windows.find((w) => w.url === url);
      return open ? open.focus() : self.clients.openWindow(url);
    }),
  );
});
