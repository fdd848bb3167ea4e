import { type FormEvent, useState } from 'react';
import { api, errorText, type Key, keyLabel } from './api.js';
import type { Created } from './KeyForm.js';

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
          : `The new signing secret of ${keyLabel(created)}`}
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
          {created.previous_secret_valid_until && (
            <p data-testid="previous-secret-until">
              Tokens signed with the previous secret keep working until{' '}
              {new Date(created.previous_secret_valid_until).toLocaleString()}: move your servers to
              the new one before then.
            </p>
          )}
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

/** How long an overlap reads: "24 hours", "90 minutes", "1 hour". */
export function overlapText(ms: number): string {
  const minutes = Math.round(ms / 60_000);
  if (minutes % 60 !== 0 || minutes < 60) return `${minutes} minute${minutes === 1 ? '' : 's'}`;
  const hours = minutes / 60;
  return `${hours} hour${hours === 1 ? '' : 's'}`;
}

/**
 * A new signing secret, after a confirmation that says how long the old one keeps working (the
 * server's TOKEN_SECRET_OVERLAP_MS, from the dashboard config).
 */
export function RotateSecretButton({
  k,
  overlapMs,
  onRotated,
}: {
  k: Key;
  overlapMs: number | undefined;
  onRotated: (c: Created) => void;
}) {
  const [error, setError] = useState('');
  return (
    <>
      <button
        type="button"
        className="secondary"
        aria-label={`Rotate the signing secret of ${k.key_prefix}`}
        onClick={async () => {
          const grace =
            overlapMs === undefined
              ? 'for the overlap the server is configured with'
              : `for ${overlapMs === 0 ? 'no time at all' : overlapText(overlapMs)}`;
          const ask = `Rotate the signing secret of ${keyLabel(k)}? A new secret is shown once; tokens signed with the old one keep working ${grace}, then only the new one's are accepted.`;
          if (!confirm(ask)) return;
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

/** The key's name, and a Rename that edits it in place (empty: unnamed). */
export function KeyName({ k, onRenamed }: { k: Key; onRenamed: () => void }) {
  const [editing, setEditing] = useState(false);
  const [name, setName] = useState(k.name ?? '');
  const [error, setError] = useState('');
  if (!editing) {
    return (
      <span className="key-name">
        <span data-testid="key-name">{k.name || <span className="hint">unnamed</span>}</span>{' '}
        <button
          type="button"
          className="link"
          aria-label={`Rename key ${k.key_prefix}`}
          onClick={() => {
            setName(k.name ?? '');
            setEditing(true);
          }}
        >
          Rename
        </button>
      </span>
    );
  }
  const save = async (e: FormEvent) => {
    e.preventDefault();
    try {
      await api('PUT', `/v1/keys/${k.id}/name`, { name });
      setError('');
      setEditing(false);
      onRenamed();
    } catch (err) {
      setError(errorText(err));
    }
  };
  return (
    <form className="rename" onSubmit={save}>
      <input
        aria-label={`New name of ${k.key_prefix}`}
        value={name}
        maxLength={64}
        onChange={(e) => setName(e.target.value)}
      />{' '}
      <button type="submit">Save</button>{' '}
      <button type="button" className="secondary" onClick={() => setEditing(false)}>
        Cancel
      </button>
      {error && <span className="error">{error}</span>}
    </form>
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
          const ask = `Require recipient tokens for ${keyLabel(k)}? Its open sockets without a token are closed, and connects need one from then on.`;
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
