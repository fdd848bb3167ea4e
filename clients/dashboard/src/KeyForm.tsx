import { type FormEvent, useState } from 'react';
import { api, errorText, type Key } from './api.js';
import { KEY_HINTS } from './key-hints.js';

type Scope = 'subscribe' | 'dispatch' | 'both';

/** A key just created (or its secret just rotated): what is shown this once. */
export interface Created extends Key {
  key?: string;
  /** Only for a key that requires recipient tokens. */
  signing_secret?: string;
  /** Tokens came on by default (a web key in inbox mode). */
  tokens_by_default?: boolean;
  /** A rotation: when the replaced signing secret stops working. */
  previous_secret_valid_until?: string;
}

/** The choices of a new key: every one back to its default once a key is created. */
const EMPTY = {
  name: '',
  client: 'mobile' as 'web' | 'mobile',
  domain: '',
  scope: 'both' as Scope,
  requireToken: false,
  inbox: false,
  inboxDays: '30',
  optOut: false,
  webhookPayload: false,
};

export function CreateKeyForm({
  kind,
  label,
  onCreated,
}: {
  kind: 'live' | 'test';
  label: string;
  onCreated: (k: Created) => void;
}) {
  const [f, setForm] = useState(EMPTY);
  const set = <K extends keyof typeof EMPTY>(k: K, v: (typeof EMPTY)[K]) =>
    setForm((old) => ({ ...old, [k]: v }));
  const [error, setError] = useState('');
  // A web key in inbox mode requires tokens unless opted out (auth's token rule).
  const tokensByDefault = f.client === 'web' && f.inbox;
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setError('');
    try {
      const body = {
        ...(f.name.trim() ? { name: f.name } : {}),
        client: f.client,
        ...(f.client === 'web' ? { domain: f.domain } : {}),
        scope: f.scope,
        ...(tokensByDefault
          ? f.optOut && { allow_unsigned_recipients: true }
          : f.requireToken && f.scope !== 'dispatch' && { require_token: true }),
        // The API names a bad number (inbox_days, 1 to 365); the input only helps.
        ...(f.inbox ? { inbox_days: Number(f.inboxDays) } : {}),
        ...(f.webhookPayload && f.scope !== 'subscribe' ? { webhook_payload: true } : {}),
      };
      const created = await api<Created>(
        'POST',
        kind === 'test' ? '/v1/keys/test' : '/v1/keys',
        body,
      );
      // The next key starts from the defaults, never silently inheriting this one's choices.
      setForm(EMPTY);
      onCreated(created);
    } catch (err) {
      setError(errorText(err));
    }
  };
  return (
    <form onSubmit={submit} className="key-form">
      <label>
        Name
        <input
          value={f.name}
          onChange={(e) => set('name', e.target.value)}
          maxLength={64}
          placeholder={kind === 'test' ? 'e.g. trying Herald' : 'e.g. checkout backend'}
        />
        <span className="hint">{KEY_HINTS.name}</span>
      </label>
      <div className="inline">
        <label>
          Client
          <select
            value={f.client}
            onChange={(e) => set('client', e.target.value as 'web' | 'mobile')}
          >
            <option value="mobile">mobile</option>
            <option value="web">web</option>
          </select>
        </label>
        {f.client === 'web' && (
          <label>
            Domain
            <input
              value={f.domain}
              onChange={(e) => set('domain', e.target.value)}
              placeholder="https://app.example.com"
              required
            />
          </label>
        )}
      </div>
      <label>
        Scope
        <select value={f.scope} onChange={(e) => set('scope', e.target.value as Scope)}>
          <option value="both">both (sockets and sending)</option>
          <option value="subscribe">subscribe (sockets only: browsers, apps)</option>
          <option value="dispatch">dispatch (sending only: servers)</option>
        </select>
        <span className="hint">{KEY_HINTS.scope}</span>
      </label>
      {f.scope !== 'dispatch' && !tokensByDefault && (
        <div className="choice">
          <label>
            <input
              type="checkbox"
              checked={f.requireToken}
              onChange={(e) => set('requireToken', e.target.checked)}
            />{' '}
            Require recipient tokens
          </label>
          <span className="hint">{KEY_HINTS.tokens}</span>
        </div>
      )}
      <div className="choice">
        <label>
          <input
            type="checkbox"
            checked={f.inbox}
            onChange={(e) => set('inbox', e.target.checked)}
          />{' '}
          Keep every event (inbox, read state on the server)
        </label>
        <span className="hint">{KEY_HINTS.inbox}</span>
      </div>
      {f.inbox && (
        <label>
          Inbox days
          <input
            type="number"
            min={1}
            max={365}
            step={1}
            value={f.inboxDays}
            onChange={(e) => set('inboxDays', e.target.value)}
            required
          />
        </label>
      )}
      {tokensByDefault && (
        <div className="choice">
          <span className="hint">Recipient tokens: required for a web inbox key</span>
          <label>
            <input
              type="checkbox"
              checked={f.optOut}
              onChange={(e) => set('optOut', e.target.checked)}
            />{' '}
            Allow unsigned recipients (anyone with this key and a user's id reads that user's inbox)
          </label>
        </div>
      )}
      {f.scope !== 'subscribe' && (
        <label>
          <input
            type="checkbox"
            checked={f.webhookPayload}
            onChange={(e) => set('webhookPayload', e.target.checked)}
          />{' '}
          Put its events' payloads in webhook bodies (they may hold personal data)
        </label>
      )}
      {kind === 'test' && (
        <p className="hint">
          Choose with care: the Test key cannot be generated again here. A subscribe-only Test key
          cannot send from the debug console.
        </p>
      )}
      <button type="submit">{label}</button>
      {error && (
        <p role="alert" className="error">
          {error}
        </p>
      )}
    </form>
  );
}
