import { Herald, type HeraldError, type NotifyResult, type Subscription } from '@herald/sdk';
import { type FormEvent, useCallback, useEffect, useRef, useState } from 'react';
import { api, type DashboardConfig, errorText, type Key } from './api.js';
import { DebugKeyPicker, PASTED, triableHere, usable } from './DebugKeyPicker.js';
import { forgetKeys, prefixOf, recallKey, rememberKey } from './key-vault.js';

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

/**
 * A revoked key's own message names the admin CLI (for operators); a dashboard user is told what
 * they can do here.
 */
const REVOKED_HERE =
  'this key is revoked: pick another key above, or create one on the Keys page (a revoked Test key is replaced by support)';

/** What the error says, with its code and field: `HeraldError.message` is not enumerable. */
function describeError(err: HeraldError): string {
  const message = err.code === 'key_revoked' ? REVOKED_HERE : err.message;
  return `${err.code}${err.field ? ` (${err.field})` : ''}: ${message}`;
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
export function DebugConsole() {
  const [config, setConfig] = useState<DashboardConfig | undefined>();
  const [keys, setKeys] = useState<Key[]>([]);
  const [chosen, setChosen] = useState(PASTED);
  const [apiKey, setApiKey] = useState('');
  const [client, setClient] = useState<'web' | 'mobile'>('mobile');
  const [recipient, setRecipient] = useState<string>(() => crypto.randomUUID());
  // Only for keys that require one; kept in this page only.
  const [token, setToken] = useState('');
  const [payload, setPayload] = useState('{"title": "Hello from the debug console"}');
  const [received, setReceived] = useState<Line[]>([]);
  const [answer, setAnswer] = useState('');
  const [state, setState] = useState<ListenerState>('closed');
  // Apart: sending a test event must not hide why the listener was refused.
  const [listenerError, setListenerError] = useState('');
  const [error, setError] = useState('');
  // Whether the user took the key field (focused it, or typed or pasted a key): the list's default
  // pick, arriving later, must not replace it. Replacing it under the cursor also lost the
  // selection, so a paste then appended the key to the picked one.
  const typed = useRef(false);
  // The field's value for the list's callback, which would otherwise see the first render's.
  const typedValue = useRef('');
  const herald = useRef<{ h: Herald; sub: Subscription<unknown> } | undefined>(undefined);

  /** Names a typed key in the picker when it is one of `listed`, and keeps its value in the tab. */
  const showListed = useCallback((listed: Key[], value: string) => {
    const k = listed.find((l) => l.key_prefix === prefixOf(value.trim()));
    setChosen(k?.key_prefix ?? PASTED);
    if (k) {
      setClient(k.client);
      rememberKey(value);
    }
  }, []);

  const choose = useCallback((k: Key | undefined) => {
    setChosen(k?.key_prefix ?? PASTED);
    setApiKey(k ? (recallKey(k.key_prefix) ?? '') : '');
    if (k) setClient(k.client);
  }, []);

  useEffect(() => {
    api<DashboardConfig>('GET', '/v1/dashboard/config').then(setConfig, (err) =>
      setError(errorText(err)),
    );
    api<{ keys: Key[] }>('GET', '/v1/keys').then(
      ({ keys: all }) => {
        // A revoked key's value is dropped from the tab and never offered again.
        forgetKeys(all.filter((k) => !usable(k, Date.now())).map((k) => k.key_prefix));
        const offered = all.filter((k) => usable(k, Date.now()));
        setKeys(offered);
        const here = offered.filter((k) => triableHere(k, location.origin));
        // A key typed or pasted before the list came wins over the page's own pick, and is
        // named in the picker when it is one of the account's.
        if (!typed.current) choose(here.find((k) => recallKey(k.key_prefix)) ?? here[0]);
        else showListed(offered, typedValue.current);
      },
      (err) => setError(errorText(err)),
    );
    return () => herald.current?.h.disconnect();
  }, [choose, showListed]);

  /** Another key or recipient: the last one's listener, answer and errors go. */
  const startOver = () => {
    herald.current?.h.disconnect();
    herald.current = undefined;
    setState('closed');
    setListenerError('');
    setError('');
    setAnswer('');
  };

  const typeKey = (value: string) => {
    typed.current = true;
    typedValue.current = value;
    startOver();
    setApiKey(value);
    showListed(keys, value);
  };
  const picked = keys.find((k) => k.key_prefix === chosen);

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
        <DebugKeyPicker
          keys={keys}
          chosen={chosen}
          onChoose={(prefix) => {
            startOver();
            choose(keys.find((k) => k.key_prefix === prefix));
          }}
        />
        <label>
          API key (kept in this tab only)
          <input
            type="password"
            value={apiKey}
            onChange={(e) => typeKey(e.target.value)}
            onFocus={() => {
              typed.current = true;
              typedValue.current = apiKey;
            }}
            required
            autoComplete="off"
            placeholder={picked ? `${picked.key_prefix}…` : 'hk_test_…'}
          />
          {picked && !apiKey && (
            <span className="hint" data-testid="paste-key">
              Paste the value of {picked.key_prefix}… saved when it was created: Herald keeps only
              its hash, and this tab has not seen it.
            </span>
          )}
        </label>
        <label>
          Client
          <select
            value={client}
            onChange={(e) => {
              startOver();
              setClient(e.target.value as 'web' | 'mobile');
            }}
          >
            <option value="mobile">mobile</option>
            <option value="web">web</option>
          </select>
        </label>
        <label>
          Recipient (UUID v4)
          <input
            value={recipient}
            onChange={(e) => {
              startOver();
              setRecipient(e.target.value);
            }}
            required
          />
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
        {received.length === 0 && (
          <p className="hint" data-testid="received-empty">
            Nothing received yet: open the listener, then send a test event to the same recipient.
          </p>
        )}
      </div>
    </section>
  );
}
