import '@herald/react/styles.css';
import './app.css';
import { NotificationBell } from '@herald/react';
import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { NotificationsPage, timeText } from './notifications-page.js';

/**
 * A page with the bell. `make example` serves it configured for one user of the make dev stack
 * (serve.ts sets the VITE_HERALD_* defaults); the query string overrides them, so the browser
 * tests (and you) can point it at any stack: ?apikey=hk_...&user=UUID&base=https://...&ws=wss://...
 * The key must be a web key whose domain is this page's origin. `/notifications` (the bell's
 * `path`) is the full page, on useNotifications; `page=N` sets its page size.
 */
const q = new URLSearchParams(location.search);
const defaults = (import.meta as { env?: Record<string, string | undefined> }).env ?? {};
const setting = (name: string, env: string) => q.get(name) ?? defaults[env] ?? undefined;
const apikey = setting('apikey', 'VITE_HERALD_API_KEY') ?? '';
const userID = setting('user', 'VITE_HERALD_USER') ?? '';
const baseUrl = setting('base', 'VITE_HERALD_BASE_URL');
const wsUrl = setting('ws', 'VITE_HERALD_WS_URL');

interface Payload {
  title?: string;
  body?: string;
}

function App() {
  return (
    <>
      <Bar />
      {location.pathname === '/notifications' && (
        <NotificationsPage
          apikey={apikey}
          userID={userID}
          baseUrl={baseUrl}
          wsUrl={wsUrl}
          pageSize={Number(q.get('page') ?? 20)}
        />
      )}
    </>
  );
}

function Bar() {
  return (
    <header className="bar">
      <strong>Acme</strong>
      <NotificationBell
        apikey={apikey}
        userID={userID}
        path="/notifications"
        baseUrl={baseUrl}
        wsUrl={wsUrl}
        onError={(error) => console.warn('herald', error.kind, error.code, error.message)}
      >
        {(data: Payload, item) => (
          <div className="note">
            <span className="note-title">{data.title}</span>
            {data.body && <span className="note-body">{data.body}</span>}
            <time className="note-time" dateTime={new Date(item.ts).toISOString()}>
              {timeText(item.ts)}
            </time>
          </div>
        )}
      </NotificationBell>
    </header>
  );
}

const root = document.getElementById('root');
if (root) {
  createRoot(root).render(
    <StrictMode>
      <App />
    </StrictMode>,
  );
}
