import type { HeraldError, HistoryPage } from '@herald/sdk';
import { useCallback, useEffect, useRef, useState } from 'react';
import type { BellHub } from './bell-hub.js';
import type { BellItem } from './types.js';
import { useBell } from './use-bell.js';

/** One notification of the page: the bell's item and whether it was read (on any device). */
export interface NotificationItem<TData = unknown> extends BellItem {
  data: TData;
  read: boolean;
}

/** Options of {@link useNotifications}: the bell's connection props, and the page size. */
export interface UseNotificationsOptions {
  apikey: string;
  userID: string;
  baseUrl?: string | undefined;
  wsUrl?: string | undefined;
  token?: string | undefined;
  getToken?: (() => Promise<string>) | undefined;
  /** Events per history page, 1 to 100. Default 20. */
  pageSize?: number;
}

/** What {@link useNotifications} returns; a new object on every render. */
export interface Notifications<TData = unknown> {
  /** Newest first: live arrivals on top, then the pages loaded so far. */
  items: NotificationItem<TData>[];
  /** The badge's count: the server's with an inbox key, this browser's otherwise. */
  unread: number;
  /** Whether the key keeps an inbox on the server (history, read state on every device). */
  inbox: boolean;
  connected: boolean;
  /** A history page is on its way. */
  loading: boolean;
  /** Older pages remain: call `loadMore`. Always false without an inbox key. */
  hasMore: boolean;
  /** Why the last history request or read mark failed (`not_connected`, a server code). */
  error: HeraldError | undefined;
  /** Loads the next (older) page; does nothing while one loads or when none remains. */
  loadMore(): void;
  /** Marks one event read, on every device (inbox keys; without one, per-item marks are not kept). */
  markRead(id: string): void;
  /** Marks everything read, and clears the badge on every device (inbox keys) or every tab. */
  markAllRead(): void;
}

interface List {
  items: NotificationItem[];
  next: string | null;
  loaded: boolean;
}
const EMPTY: List = { items: [], next: null, loaded: false };

/**
 * Headless state of the full notifications page (the bell's `path`). With an inbox key it pages
 * the server's history (newest first), keeps each event's read state, and puts live arrivals on
 * top; it shares the bell's socket (one per browser: a page in a tab that does not hold it asks
 * the tab that does). Without an inbox key it lists what the bell keeps in this browser.
 */
export function useNotifications<TData = unknown>(
  options: UseNotificationsOptions,
): Notifications<TData> {
  const { pageSize = 20, ...config } = options;
  const { hub, snapshot } = useBell({
    ...config,
    baseUrl: config.baseUrl,
    wsUrl: config.wsUrl,
  });
  const { state, connection } = snapshot;
  const inbox = state.inbox === true;
  const connected = connection === 'connected';
  const [list, setList] = useState<List>(EMPTY);
  const [loading, setLoading] = useState(false);
  const [error, setError] = useState<HeraldError>();
  const busy = useRef<BellHub>(undefined);

  // Another user or key: another inbox.
  const current = useRef(hub);
  useEffect(() => {
    current.current = hub;
    if (hub) setList(EMPTY);
  }, [hub]);

  const load = useCallback(
    (before: string | null) => {
      // One page at a time (per user: another user's page may still be on its way).
      if (!hub || busy.current === hub) return;
      busy.current = hub;
      setLoading(true);
      hub.inbox({ history: { before, limit: pageSize } }).then(
        (result) => {
          done();
          if (current.current !== hub) return; // another user's page, late
          const page = result as HistoryPage;
          const older = page.events.map(({ payload, ...e }) => ({ ...e, data: payload }));
          setList((l) => {
            // Arrivals before the first page: only those newer than it (the rest are on it).
            const top = older[0]?.ts ?? Number.NEGATIVE_INFINITY;
            const kept = l.loaded ? l.items : l.items.filter((i) => i.ts > top);
            return { items: unique([...kept, ...older]), next: page.next, loaded: true };
          });
          setError(undefined);
        },
        (err: HeraldError) => {
          done();
          if (current.current === hub) setError(err);
        },
      );
      const done = () => {
        if (busy.current !== hub) return;
        busy.current = undefined;
        setLoading(false);
      };
    },
    [hub, pageSize],
  );

  // The newest page once connected (again, after a failure while the socket was down).
  useEffect(() => {
    if (inbox && connected && !list.loaded) load(null);
  }, [inbox, connected, list.loaded, load]);

  // Live arrivals on top. A device's catch-up also arrives as events, older than what is listed:
  // those are in the history already, at their place.
  useEffect(
    () =>
      hub?.onNew((fresh) => {
        setList((l) => {
          const top = l.items[0]?.ts ?? Number.NEGATIVE_INFINITY;
          const arrived = fresh.filter((i) => i.ts >= top).map((i) => ({ ...i, read: false }));
          return arrived.length ? { ...l, items: unique([...arrived.reverse(), ...l.items]) } : l;
        });
      }),
    [hub],
  );

  // Everything was read, here or on another device: the server's count says so.
  useEffect(() => {
    if (inbox && state.unread === 0) setList(allRead);
  }, [inbox, state.unread]);

  const items = inbox
    ? list.items
    : state.items.map((item, i) => ({ ...item, read: i >= state.unread }));
  return {
    items: items as NotificationItem<TData>[],
    unread: state.unread,
    inbox,
    connected,
    loading,
    hasMore: inbox && list.loaded && list.next !== null,
    error,
    loadMore: () => {
      if (inbox && list.loaded && list.next !== null) load(list.next);
    },
    markRead: (id) => {
      if (!inbox || !hub) return;
      setList((l) => ({
        ...l,
        items: l.items.map((i) => (i.id === id ? { ...i, read: true } : i)),
      }));
      hub.inbox({ read: [id] }).catch(setError);
    },
    markAllRead: () => {
      setList(allRead);
      hub?.markRead();
    },
  };
}

/** The list with every item read; the same list when nothing changes (no re-render). */
function allRead(l: List): List {
  if (l.items.every((i) => i.read)) return l;
  return { ...l, items: l.items.map((i) => (i.read ? i : { ...i, read: true })) };
}

/** The first of each id: a live arrival may also be on a page loaded after it. */
function unique(items: NotificationItem[]): NotificationItem[] {
  const seen = new Set<string>();
  return items.filter((i) => !seen.has(i.id) && seen.add(i.id));
}
