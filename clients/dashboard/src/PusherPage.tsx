import { useCallback, useEffect, useRef, useState } from 'react';
import {
  api,
  type DashboardConfig,
  errorText,
  type Key,
  type PusherApp,
  type PusherAppSecret,
} from './api.js';
import { CopyButton } from './CopyButton.js';
import { AppRow, CreateAppForm } from './PusherForms.js';
import { PusherSnippets } from './PusherSnippets.js';

/** The secret on show: the app it is of, what happened (created, rotated). */
interface Shown {
  what: string;
  secret: PusherAppSecret;
}

/**
 * Pusher apps (issue 41, docs/api.md "Pusher protocol"): stock pusher-js, Laravel Echo and the
 * `pusher` server libraries talk to Herald with an app's id, key and secret. The page lists the
 * account's apps, creates one bound to one of its keys (the secret shown once), rotates a secret
 * (shown once), deletes one, and shows each app's snippets with its values filled in.
 */
export function PusherPage() {
  const [apps, setApps] = useState<PusherApp[] | undefined>();
  const [keys, setKeys] = useState<Key[]>([]);
  const [config, setConfig] = useState<DashboardConfig | undefined>();
  const [shown, setShown] = useState<Shown | undefined>();
  const [snippetsOf, setSnippetsOf] = useState<string | undefined>();
  const [error, setError] = useState('');
  const refresh = useCallback(async () => {
    try {
      setApps((await api<{ apps: PusherApp[] }>('GET', '/v1/pusher/apps')).apps);
      setError('');
    } catch (err) {
      setError(errorText(err));
    }
  }, []);
  useEffect(() => {
    void refresh();
    api<{ keys: Key[] }>('GET', '/v1/dashboard/keys').then(
      (r) => setKeys(r.keys),
      (err) => setError(errorText(err)),
    );
    api<DashboardConfig>('GET', '/v1/dashboard/config').then(setConfig, (err) =>
      setError(errorText(err)),
    );
  }, [refresh]);

  const onSecret = (what: string) => (secret: PusherAppSecret) => {
    setShown({ what, secret });
    setSnippetsOf(secret.app_id);
    void refresh();
  };
  const snippetApp = apps?.find((a) => a.app_id === snippetsOf);

  return (
    <section aria-labelledby="pusher-title">
      <h1 id="pusher-title">Pusher apps</h1>
      <p className="hint">
        Stock pusher-js, Laravel Echo and the <code>pusher</code> server libraries talk to Herald
        with an app's id, key and secret. Events to a signed-in user (<code>sendToUser</code>, or
        the app's user channel) are durable: queued while the user is offline. Other channels are
        live only, as Pusher's are. Presence channels and <code>client-</code> events are not
        supported yet.
      </p>
      {error && (
        <p role="alert" className="error">
          {error}
        </p>
      )}
      {shown && (
        <SecretShownOnce
          what={shown.what}
          secret={shown.secret}
          onDone={() => setShown(undefined)}
        />
      )}
      <div className="card">
        <h2>Create an app</h2>
        <CreateAppForm keys={keys} onCreated={onSecret('The secret of your new app')} />
      </div>
      <div className="card">
        <h2>Apps</h2>
        {apps === undefined ? (
          !error && <p className="loading">Loading…</p>
        ) : apps.length === 0 ? (
          <p className="hint">No apps yet: create one above.</p>
        ) : (
          <ul className="endpoints">
            {apps.map((a) => (
              <AppRow
                key={a.app_id}
                app={a}
                keys={keys}
                snippetsShown={snippetsOf === a.app_id}
                onSnippets={() => setSnippetsOf(snippetsOf === a.app_id ? undefined : a.app_id)}
                onChanged={refresh}
                onRotated={onSecret(`The new secret of app ${a.app_id}`)}
              />
            ))}
          </ul>
        )}
      </div>
      {snippetApp && (
        <PusherSnippets
          app={snippetApp}
          secret={shown?.secret.app_id === snippetApp.app_id ? shown.secret.secret : undefined}
          config={config}
        />
      )}
    </section>
  );
}

function SecretShownOnce({
  what,
  secret: s,
  onDone,
}: {
  what: string;
  secret: PusherAppSecret;
  onDone: () => void;
}) {
  // Focus moves to the notice (and the page to it): the form that made the secret is below.
  const heading = useRef<HTMLHeadingElement>(null);
  useEffect(() => {
    if (s.secret) heading.current?.focus();
  }, [s.secret]);
  return (
    <section className="card notice" aria-label="New Pusher app secret">
      <h2 ref={heading} tabIndex={-1}>
        {what}
      </h2>
      <p>
        <strong>Shown once:</strong> Herald keeps it sealed and cannot show it again. Your server
        signs its requests and your users' sign-ins with it; never put it in a browser. Copy it now
        (the snippets below carry it until you close this).
      </p>
      <dl className="facts">
        <dt>App id</dt>
        <dd>
          <code>{s.app_id}</code>
        </dd>
        <dt>Key</dt>
        <dd>
          <code>{s.key}</code>
        </dd>
        <dt>Secret</dt>
        <dd>
          <code className="secret" data-testid="pusher-secret">
            {s.secret}
          </code>{' '}
          <CopyButton value={s.secret} label="Copy secret" />
        </dd>
      </dl>
      <p>
        <button type="button" onClick={onDone}>
          I have saved it
        </button>
      </p>
    </section>
  );
}
