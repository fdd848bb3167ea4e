import { Herald, type Subscription } from '@herald/sdk';
import { type FormEvent, useEffect, useRef, useState } from 'react';
import { api, type DashboardConfig, errorText } from './api.js';

interface Line {
  /** The event id: unique, so a stable React key. */
  id: string;
  at: string;
  text: string;
}

/**
 * Sends a test event from the page and shows it arrive in a listener the page opens for the same
 * recipient (the SDK, herald.v1). The key's value is never stored by Herald: the page holds the
 * one shown at creation this session, or the one pasted here, in memory only.
 */
export function DebugConsole({
  knownKey,
}: {
  knownKey?: { key: string; client: 'web' | 'mobile' } | undefined;
}) {
  const [config, setConfig] = useState<DashboardConfig | undefined>();
  const [apiKey, setApiKey] = useState(knownKey?.key ?? '');
  const [client, setClient] = useState<'web' | 'mobile'>(knownKey?.client ?? 'mobile');
  const [recipient, setRecipient] = useState<string>(() => crypto.randomUUID());
  const [payload, setPayload] = useState('{"title": "Hello from the debug console"}');
  const [received, setReceived] = useState<Line[]>([]);
  const [answer, setAnswer] = useState('');
  const [state, setState] = useState('closed');
  const [error, setError] = useState('');
  const herald = useRef<{ h: Herald; sub: Subscription<unknown> } | undefined>(undefined);

  useEffect(() => {
    api<DashboardConfig>('GET', '/v1/dashboard/config').then(setConfig, (err) =>
      setError(errorText(err)),
    );
    return () => herald.current?.h.disconnect();
  }, []);

  const options = () => ({
    apiKey: apiKey.trim(),
    client,
    ...(config?.ingress_url ? { baseUrl: config.ingress_url } : {}),
    ...(config?.ws_url ? { wsUrl: config.ws_url } : {}),
  });

  const listen = () => {
    setError('');
    herald.current?.h.disconnect();
    const h = new Herald(options());
    const sub = h.subscribe<unknown>(recipient);
    sub.onConnectionChange((s) => setState(s));
    sub.onError((err) => setError(`${err.code}: ${err.message}`));
    sub.listen((p, event) =>
      setReceived((r) => [
        {
          id: event.id,
          at: new Date(event.ts).toLocaleTimeString(),
          text: `${event.id} ${JSON.stringify(p)}`,
        },
        ...r,
      ]),
    );
    herald.current = { h, sub };
    setState('connecting');
  };

  const send = async (e: FormEvent) => {
    e.preventDefault();
    setError('');
    let body: unknown;
    try {
      body = JSON.parse(payload);
    } catch {
      setError('The payload is not valid JSON');
      return;
    }
    try {
      const h = herald.current?.h ?? new Herald(options());
      const result = await h.notify({ recipient, payload: body });
      setAnswer(JSON.stringify(result));
    } catch (err) {
      setError(errorText(err));
    }
  };

  return (
    <section aria-labelledby="debug-title">
      <h1 id="debug-title">Debug console</h1>
      <form className="card" onSubmit={send}>
        <label>
          API key (kept in this page only)
          <input
            type="password"
            value={apiKey}
            onChange={(e) => setApiKey(e.target.value)}
            required
            autoComplete="off"
            placeholder="hk_test_…"
          />
        </label>
        <label>
          Client
          <select value={client} onChange={(e) => setClient(e.target.value as 'web' | 'mobile')}>
            <option value="mobile">mobile</option>
            <option value="web">web</option>
          </select>
        </label>
        <label>
          Recipient (UUID v4)
          <input value={recipient} onChange={(e) => setRecipient(e.target.value)} required />
        </label>
        <div className="inline">
          <button type="button" onClick={listen} disabled={!apiKey.trim()}>
            Open listener
          </button>
          <span role="status" data-testid="listener-state">
            Listener: {state}
          </span>
        </div>
        <label>
          Payload (JSON)
          <textarea value={payload} onChange={(e) => setPayload(e.target.value)} rows={4} />
        </label>
        <button type="submit">Send test event</button>
        {error && (
          <p role="alert" className="error">
            {error}
          </p>
        )}
      </form>
      <div className="card">
        <h2>/notify answered</h2>
        <pre data-testid="notify-answer">{answer || '—'}</pre>
        <h2>Received by the listener</h2>
        <ul className="log" aria-live="polite" data-testid="received">
          {received.map((l) => (
            <li key={l.id}>
              <time>{l.at}</time> {l.text}
            </li>
          ))}
        </ul>
      </div>
    </section>
  );
}
