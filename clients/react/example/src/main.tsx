import '@herald/react/styles.css';
import './app.css';
import { NotificationBell } from '@herald/react';
import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';

/**
 * A page with the bell, configured from the query string so the browser tests (and you) can
 * point it at any stack: ?apikey=hk_...&user=UUID&base=https://...&ws=wss://...
 * The key must be a web key whose domain is this page's origin.
 */
const q = new URLSearchParams(location.search);
const apikey = q.get('apikey') ?? '';
const userID = q.get('user') ?? '';

interface Payload {
  title?: string;
  body?: string;
}

function App() {
  return (
    <header className="bar">
      <strong>Acme</strong>
      <NotificationBell
        apikey={apikey}
        userID={userID}
        path="/notifications"
        baseUrl={q.get('base') ?? undefined}
        wsUrl={q.get('ws') ?? undefined}
        onError={(error) => console.warn('herald', error.kind, error.code, error.message)}
      >
        {(data: Payload) => (
          <div className="note">
            <span className="note-title">{data.title}</span>
            {data.body && <span className="note-body">{data.body}</span>}
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
