import { type FormEvent, useState } from 'react';
import { api, errorText, type Key } from './api.js';

type Scope = 'subscribe' | 'dispatch' | 'both';

/** A key just created (or its secret just rotated): what is shown this once. */
export interface Created extends Key {
  key?: string;
  /** Only for a key that requires recipient tokens. */
  signing_secret?: string;
  /** Tokens came on by default (a web key in inbox mode). */
  tokens_by_default?: boolean;
}

export function CreateKeyForm({
  kind,
  label,
  onCreated,
}: {
  kind: 'live' | 'test';
  label: string;
  onCreated: (k: Created) => void;
}) {
  const [client, setClient] = useState<'web' | 'mobile'>('mobile');
  const [domain, setDomain] = useState('');
  const [scope, setScope] = useState<Scope>('both');
  const [requireToken, setRequireToken] = useState(false);
  const [inbox, setInbox] = useState(false);
  const [inboxDays, setInboxDays] = useState('30');
  const [optOut, setOptOut] = useState(false);
  const [webhookPayload, setWebhookPayload] = useState(false);
  const [error, setError] = useState('');
  // A web key in inbox mode requires tokens unless opted out (auth's token rule).
  const tokensByDefault = client === 'web' && inbox;
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setError('');
    try {
      const body = {
        client,
        ...(client === 'web' ? { domain } : {}),
        scope,
        ...(tokensByDefault
          ? optOut && { allow_unsigned_recipients: true }
          : requireToken && scope !== 'dispatch' && { require_token: true }),
        // The API names a bad number (inbox_days, 1 to 365); the input only helps.
        ...(inbox ? { inbox_days: Number(inboxDays) } : {}),
        ...(webhookPayload && scope !== 'subscribe' ? { webhook_payload: true } : {}),
      };
      onCreated(await api<Created>('POST', kind === 'test' ? '/v1/keys/test' : '/v1/keys', body));
    } catch (err) {
      setError(errorText(err));
    }
  };
  return (
    <form onSubmit={submit} className="inline">
      <label>
        Client
        <select value={client} onChange={(e) => setClient(e.target.value as 'web' | 'mobile')}>
          <option value="mobile">mobile</option>
          <option value="web">web</option>
        </select>
      </label>
      {client === 'web' && (
        <label>
          Domain
          <input
            value={domain}
            onChange={(e) => setDomain(e.target.value)}
            placeholder="https://app.example.com"
            required
          />
        </label>
      )}
      <label>
        Scope
        <select value={scope} onChange={(e) => setScope(e.target.value as Scope)}>
          <option value="both">both (sockets and sending)</option>
          <option value="subscribe">subscribe (sockets only: browsers, apps)</option>
          <option value="dispatch">dispatch (sending only: servers)</option>
        </select>
      </label>
      {scope !== 'dispatch' && !tokensByDefault && (
        <label>
          <input
            type="checkbox"
            checked={requireToken}
            onChange={(e) => setRequireToken(e.target.checked)}
          />{' '}
          Require recipient tokens
        </label>
      )}
      <label>
        <input type="checkbox" checked={inbox} onChange={(e) => setInbox(e.target.checked)} /> Keep
        every event (inbox, read state on the server)
      </label>
      {inbox && (
        <label>
          Inbox days
          <input
            type="number"
            min={1}
            max={365}
            step={1}
            value={inboxDays}
            onChange={(e) => setInboxDays(e.target.value)}
            required
          />
        </label>
      )}
      {tokensByDefault && (
        <>
          <span className="hint">Recipient tokens: required for a web inbox key</span>
          <label>
            <input type="checkbox" checked={optOut} onChange={(e) => setOptOut(e.target.checked)} />{' '}
            Allow unsigned recipients (anyone with this key and a user's id reads that user's inbox)
          </label>
        </>
      )}
      {scope !== 'subscribe' && (
        <label>
          <input
            type="checkbox"
            checked={webhookPayload}
            onChange={(e) => setWebhookPayload(e.target.checked)}
          />{' '}
          Put its events' payloads in webhook bodies (they may hold personal data)
        </label>
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

export function ShownOnce({ created, onDone }: { created: Created; onDone: () => void }) {
  const [copied, setCopied] = useState('');
  const copy = async (what: string, value: string) => {
    await navigator.clipboard?.writeText(value).catch(() => undefined);
    setCopied(what);
  };
  return (
    <section className="card notice" aria-label="New key">
      <h2>
        {created.key
          ? `Your new ${created.kind === 'test' ? 'Test' : 'Live'} key`
          : `The new signing secret of ${created.key_prefix}…`}
      </h2>
      <p>This is the only time it is shown: copy it now and keep it secret.</p>
      {created.key && (
        <p>
          <code className="secret" data-testid="new-key">
            {created.key}
          </code>{' '}
          <button type="button" onClick={() => copy('key', created.key ?? '')}>
            {copied === 'key' ? 'Copied' : 'Copy key'}
          </button>
        </p>
      )}
      {created.signing_secret && (
        <>
          <p>
            Signing secret: your server signs recipient tokens with it (HS256); sockets of this key
            need one. Never put it in a browser.
            {created.tokens_by_default &&
              ' Tokens are on by default for a web key in inbox mode, so its inbox is never readable with the public key alone.'}
          </p>
          <p>
            <code className="secret" data-testid="new-signing-secret">
              {created.signing_secret}
            </code>{' '}
            <button type="button" onClick={() => copy('secret', created.signing_secret ?? '')}>
              {copied === 'secret' ? 'Copied' : 'Copy secret'}
            </button>
          </p>
        </>
      )}
      <button type="button" onClick={onDone}>
        I have saved it
      </button>
    </section>
  );
}

/** A new signing secret; the old one keeps working for the configured overlap. */
export function RotateSecretButton({ k, onRotated }: { k: Key; onRotated: (c: Created) => void }) {
  const [error, setError] = useState('');
  return (
    <>
      <button
        type="button"
        aria-label={`Rotate the signing secret of ${k.key_prefix}`}
        onClick={async () => {
          try {
            onRotated(await api<Created>('POST', `/v1/keys/${k.id}/signing-secret`));
          } catch (err) {
            setError(errorText(err));
          }
        }}
      >
        Rotate secret
      </button>
      {error && <span className="error">{error}</span>}
    </>
  );
}

/** Turns recipient tokens on for a key that has none: its first signing secret, shown once. */
export function RequireTokenButton({ k, onDone }: { k: Key; onDone: (c: Created) => void }) {
  const [error, setError] = useState('');
  return (
    <>
      <button
        type="button"
        className="secondary"
        aria-label={`Require recipient tokens for ${k.key_prefix}`}
        onClick={async () => {
          const ask = `Require recipient tokens for ${k.key_prefix}…? Its open sockets without a token are closed, and connects need one from then on.`;
          if (!confirm(ask)) return;
          try {
            onDone(await api<Created>('POST', `/v1/keys/${k.id}/require-token`));
          } catch (err) {
            setError(errorText(err));
          }
        }}
      >
        Require tokens
      </button>
      {error && <span className="error">{error}</span>}
    </>
  );
}
