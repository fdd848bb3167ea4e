import { useNotifications } from '@herald/react';

interface Payload {
  title?: string;
  body?: string;
}

/** When an event arrived, as people say it: "just now", "5 min ago", then the date and time. */
export function timeText(ts: number, now = Date.now()): string {
  const s = Math.max(0, Math.round((now - ts) / 1000));
  if (s < 45) return 'just now';
  if (s < 3600) return `${Math.round(s / 60)} min ago`;
  if (s < 86_400) return `${Math.round(s / 3600)} h ago`;
  return new Date(ts).toLocaleString();
}

/**
 * The full notifications page at the bell's `path` (`/notifications`), on the headless
 * `useNotifications`: with an inbox key, the server's history a page at a time (`?page=N` events a
 * page, default 20), each event's read state, live arrivals on top.
 */
export function NotificationsPage(props: {
  apikey: string;
  userID: string;
  baseUrl: string | undefined;
  wsUrl: string | undefined;
  pageSize: number;
}) {
  const n = useNotifications<Payload>(props);
  return (
    <main className="page" data-inbox={n.inbox} data-unread={n.unread}>
      <h1>Notifications</h1>
      <button type="button" className="mark-all" onClick={n.markAllRead} disabled={!n.unread}>
        Mark all read
      </button>
      {n.error && <p className="page-error">{n.error.message}</p>}
      <ul className="page-list">
        {n.items.map((item) => (
          <li key={item.id} className="page-item" data-id={item.id} data-read={item.read}>
            <div className="note">
              <span className="note-title">{item.data.title}</span>
              {item.data.body && <span className="note-body">{item.data.body}</span>}
              <time className="note-time" dateTime={new Date(item.ts).toISOString()}>
                {timeText(item.ts)}
              </time>
            </div>
            {!item.read && (
              <button type="button" className="mark-one" onClick={() => n.markRead(item.id)}>
                Mark read
              </button>
            )}
          </li>
        ))}
      </ul>
      {n.hasMore && (
        <button type="button" className="load-more" onClick={n.loadMore} disabled={n.loading}>
          Load more
        </button>
      )}
    </main>
  );
}
