import { type FormEvent, useCallback, useEffect, useState } from 'react';
import {
  api,
  errorText,
  WEBHOOK_EVENT_TYPES,
  type WebhookEndpoint,
  type WebhookEventType,
  type WithSecret,
} from './api.js';
import { EndpointRow } from './WebhookEndpoint.js';

/**
 * Delivery-status webhooks: the account's endpoints with their events and state, a form that
 * creates one (its secret shown once), and per endpoint its recent attempts, a test event, a
 * replay since a time, a new secret, enable and delete (docs/api.md, "Webhooks").
 */
export function WebhooksPage() {
  const [endpoints, setEndpoints] = useState<WebhookEndpoint[] | undefined>();
  const [secret, setSecret] = useState<{ what: string; endpoint: WithSecret } | undefined>();
  const [error, setError] = useState('');
  const refresh = useCallback(async () => {
    try {
      setEndpoints((await api<{ endpoints: WebhookEndpoint[] }>('GET', '/v1/webhooks')).endpoints);
      setError('');
    } catch (err) {
      setError(errorText(err));
    }
  }, []);
  useEffect(() => {
    void refresh();
  }, [refresh]);

  const shown = (what: string) => (endpoint: WithSecret) => {
    setSecret({ what, endpoint });
    void refresh();
  };

  return (
    <section aria-labelledby="webhooks-title">
      <h1 id="webhooks-title">Webhooks</h1>
      <p className="hint">
        Herald posts each event's status changes to your backend, signed per the Standard Webhooks
        spec. Order is not guaranteed: use each body's <code>timestamp</code> and <code>id</code>.
      </p>
      {error && (
        <p role="alert" className="error">
          {error}
        </p>
      )}
      {secret && (
        <SecretShownOnce
          what={secret.what}
          endpoint={secret.endpoint}
          onDone={() => setSecret(undefined)}
        />
      )}
      <div className="card">
        <h2>Add an endpoint</h2>
        <CreateEndpointForm onCreated={shown('The signing secret of your new endpoint')} />
      </div>
      <div className="card">
        <h2>Endpoints</h2>
        {endpoints === undefined ? (
          <p className="loading">Loading…</p>
        ) : endpoints.length === 0 ? (
          <p className="hint">No endpoints yet: add one above.</p>
        ) : (
          <ul className="endpoints">
            {endpoints.map((e) => (
              <EndpointRow
                key={e.id}
                endpoint={e}
                onChanged={refresh}
                onRotated={shown(`The new signing secret of ${e.url}`)}
              />
            ))}
          </ul>
        )}
      </div>
    </section>
  );
}

function CreateEndpointForm({ onCreated }: { onCreated: (e: WithSecret) => void }) {
  const [url, setUrl] = useState('');
  const [events, setEvents] = useState<Set<WebhookEventType>>(new Set(WEBHOOK_EVENT_TYPES));
  const [error, setError] = useState('');
  const toggle = (type: WebhookEventType, on: boolean) => {
    const next = new Set(events);
    if (on) next.add(type);
    else next.delete(type);
    setEvents(next);
  };
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setError('');
    if (events.size === 0) {
      setError('Choose at least one event type.');
      return;
    }
    try {
      const created = await api<WithSecret>('POST', '/v1/webhooks', {
        url,
        events: WEBHOOK_EVENT_TYPES.filter((t) => events.has(t)),
      });
      setUrl('');
      onCreated(created);
    } catch (err) {
      setError(errorText(err));
    }
  };
  return (
    <form onSubmit={submit}>
      <label>
        Endpoint URL
        <input
          type="url"
          value={url}
          onChange={(e) => setUrl(e.target.value)}
          placeholder="https://api.example.com/herald/webhooks"
          required
        />
      </label>
      <fieldset className="events">
        <legend>Events</legend>
        {WEBHOOK_EVENT_TYPES.map((type) => (
          <label key={type}>
            <input
              type="checkbox"
              checked={events.has(type)}
              onChange={(e) => toggle(type, e.target.checked)}
            />{' '}
            {type}
          </label>
        ))}
      </fieldset>
      <button type="submit">Add endpoint</button>
      {error && (
        <p role="alert" className="error">
          {error}
        </p>
      )}
    </form>
  );
}

function SecretShownOnce({
  what,
  endpoint,
  onDone,
}: {
  what: string;
  endpoint: WithSecret;
  onDone: () => void;
}) {
  const [copied, setCopied] = useState(false);
  return (
    <section className="card notice" aria-label="New webhook secret">
      <h2>{what}</h2>
      <p>
        This is the only time it is shown: your backend verifies every delivery to{' '}
        <code>{endpoint.url}</code> with it. Copy it now and keep it secret.
      </p>
      <p>
        <code className="secret" data-testid="webhook-secret">
          {endpoint.secret}
        </code>{' '}
        <button
          type="button"
          onClick={async () => {
            await navigator.clipboard?.writeText(endpoint.secret).catch(() => undefined);
            setCopied(true);
          }}
        >
          {copied ? 'Copied' : 'Copy secret'}
        </button>
      </p>
      <button type="button" onClick={onDone}>
        I have saved it
      </button>
    </section>
  );
}
