import { Herald, type HeraldError, type NotifyResult, type Subscription } from '@herald/sdk';
import { type FormEvent, useEffect, useRef, useState } from 'react';
import { api, type DashboardConfig, errorText } from './api.js';

/**
 * The listener's state as the page shows it: `refused` once the SDK gave up on the socket (a
 * refused key, Origin or parameter, a wrong URL); while it retries (network, 4429, 4503) it says
 * `connecting` or `disconnected`.
 */
type ListenerState = 'closed' | 'connecting' | 'connected' | 'disconnected' | 'refused';

/** Whether the SDK stops retrying after this socket error (docs/sdk.md, "onError"). */
function stopsTheSocket(err: HeraldError): boolean {
  if (err.kind === 'wrong_endpoint' || err.kind === 'runtime') return true;
  return err.kind === 'refused' && err.closeCode !== 4429;
}

/** What the error says, with its code and field: `HeraldError.message` is not enumerable. */
function describeError(err: HeraldError): string {
  return `${err.code}${err.field ? ` (${err.field})` : ''}: ${err.message}`;
}

/** `/notify`'s answer for people: the status, the id or the error's own sentence. */
function describeResult(r: NotifyResult): string {
  const head = `HTTP ${r.httpStatus || '—'}: ${r.status}`;
  return r.error ? `${head}\n${describeError(r.error)}` : `${head}\nid ${r.id}`;
}

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
  // Only for keys that require one; kept in this page only, as the key is.
  const [token, setToken] = useState('');
  const [payload, setPayload] = useState('{"title": "Hello from the debug console"}');
  const [received, setReceived] = useState<Line[]>([]);
  const [answer, setAnswer] = useState('');
  const [state, setState] = useState<ListenerState>('closed');
  // Apart: sending a test event must not hide why the listener was refused.
  const [listenerError, setListenerError] = useState('');
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
    ...(token.trim() ? { token: token.trim() } : {}),
    ...(config?.ingress_url ? { baseUrl: config.ingress_url } : {}),
    ...(config?.ws_url ? { wsUrl: config.ws_url } : {}),
  });

  const close = () => {
    herald.current?.h.disconnect();
    herald.current = undefined;
    setState('closed');
  };

  const listen = () => {
    setListenerError('');
    herald.current?.h.disconnect();
    const h = new Herald(options());
    const sub = h.subscribe<unknown>(recipient);
    sub.onConnectionChange((s) => setState(s));
    sub.onError((err) => {
      setListenerError(describeError(err));
      if (stopsTheSocket(err)) setState('refused');
    });
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
      setAnswer(describeResult(await h.notify({ recipient, payload: body })));
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
        <label>
          Recipient token (only for keys that require one)
          <input
            type="password"
            value={token}
            onChange={(e) => setToken(e.target.value)}
            autoComplete="off"
            placeholder="eyJ… (npm run -s admin -- token create --key ID --recipient UUID)"
          />
        </label>
        <div className="inline listener">
          {state === 'closed' || state === 'refused' ? (
            <button type="button" onClick={listen} disabled={!apiKey.trim()}>
              Open listener
            </button>
          ) : (
            <button type="button" className="secondary" onClick={close}>
              Close listener
            </button>
          )}
          <span role="status" data-testid="listener-state">
            Listener: {state}
          </span>
        </div>
        {listenerError && (
          <p role="alert" className="error" data-testid="listener-error">
            {listenerError}
          </p>
        )}
        <label>
          Payload (JSON)
          <textarea value={payload} onChange={(e) => setPayload(e.target.value)} rows={4} />
        </label>
        <button type="submit">Send test event</button>
        {error && (
          <p role="alert" className="error" data-testid="send-error">
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
