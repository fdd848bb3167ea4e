import { useCallback, useEffect, useState } from 'react';
import { AuthPage } from './AuthPage.js';
import { type Account, ApiError, api, loggedInHere, setCsrf } from './api.js';
import { DebugConsole } from './DebugConsole.js';
import { DeliveryPage } from './DeliveryPage.js';
import { KeysPage } from './KeysPage.js';
import { forgetAllKeys, rememberKey } from './key-vault.js';
import { PlanPage } from './PlanPage.js';
import { PusherPage } from './PusherPage.js';
import { PushPage } from './PushPage.js';
import { TopicsPage } from './TopicsPage.js';
import { WebhooksPage } from './WebhooksPage.js';

const TABS = [
  ['keys', 'Keys'],
  ['plan', 'Plan'],
  ['delivery', 'Delivery status'],
  ['topics', 'Topics'],
  ['webhooks', 'Webhooks'],
  ['push', 'Push'],
  ['pusher', 'Pusher apps'],
  ['debug', 'Debug console'],
] as const;
type Tab = (typeof TABS)[number][0];

function tabFromHash(): Tab {
  const h = location.hash.replace('#', '');
  return (TABS.find(([id]) => id === h)?.[0] ?? 'keys') as Tab;
}

export function App() {
  const [account, setAccount] = useState<Account | null | undefined>(undefined);
  const [tab, setTab] = useState<Tab>(tabFromHash);

  const load = useCallback(async () => {
    if (!loggedInHere()) {
      setAccount(null);
      return;
    }
    try {
      setAccount(await api<Account>('GET', '/v1/account'));
    } catch (err) {
      // The session ended (expired, logged out elsewhere, password reset): log in again.
      if (err instanceof ApiError && err.status === 401) setCsrf(undefined);
      setAccount(null);
    }
  }, []);
  useEffect(() => {
    void load();
    const onHash = () => setTab(tabFromHash());
    addEventListener('hashchange', onHash);
    return () => removeEventListener('hashchange', onHash);
  }, [load]);

  if (account === undefined) return <p className="loading">Loading…</p>;
  if (account === null) return <AuthPage onLoggedIn={load} />;

  const logout = async () => {
    await api('DELETE', '/v1/sessions/current').catch(() => undefined);
    setCsrf(undefined);
    forgetAllKeys();
    setAccount(null);
  };

  return (
    <div className="shell">
      <header className="top">
        <strong className="brand">Herald</strong>
        <nav aria-label="Dashboard sections">
          {TABS.map(([id, label]) => (
            <a key={id} href={`#${id}`} aria-current={tab === id ? 'page' : undefined}>
              {label}
            </a>
          ))}
        </nav>
        <span className="who">
          {account.email}{' '}
          <button type="button" onClick={logout}>
            Log out
          </button>
        </span>
      </header>
      <main>
        {tab === 'keys' && <KeysPage account={account} onKeyShown={rememberKey} />}
        {tab === 'plan' && <PlanPage account={account} onAccountChanged={load} />}
        {tab === 'delivery' && <DeliveryPage />}
        {tab === 'topics' && <TopicsPage />}
        {tab === 'webhooks' && <WebhooksPage />}
        {tab === 'push' && <PushPage />}
        {tab === 'pusher' && <PusherPage />}
        {tab === 'debug' && <DebugConsole />}
      </main>
    </div>
  );
}
