import { useCallback, useEffect, useState } from 'react';
import { type Account, api, type DashboardConfig, errorText, type Key, keyLabel } from './api.js';
import { KeyName, RequireTokenButton, RotateSecretButton, ShownOnce } from './KeyActions.js';
import { type Created, CreateKeyForm } from './KeyForm.js';
import { useNow } from './useNow.js';

export function KeysPage({
  account,
  onKeyShown,
}: {
  account: Account;
  onKeyShown: (key: string) => void;
}) {
  const [keys, setKeys] = useState<Key[]>([]);
  const [created, setCreated] = useState<Created | undefined>();
  const [error, setError] = useState('');
  // The rotation overlap, for the Rotate button's question; the page works without it.
  const [overlapMs, setOverlapMs] = useState<number | undefined>();
  useEffect(() => {
    api<DashboardConfig>('GET', '/v1/dashboard/config').then(
      (c) => setOverlapMs(c.secret_overlap_ms),
      () => undefined,
    );
  }, []);
  const refresh = useCallback(async () => {
    try {
      setKeys((await api<{ keys: Key[] }>('GET', '/v1/dashboard/keys')).keys);
    } catch (err) {
      setError(errorText(err));
    }
  }, []);
  useEffect(() => {
    void refresh();
  }, [refresh]);

  const shown = (k: Created) => {
    setCreated(k);
    if (k.key) onKeyShown(k.key);
    void refresh();
  };
  const test = keys.find((k) => k.kind === 'test');
  const live = keys.filter((k) => k.kind === 'live');
  const paid = account.status === 'active';

  return (
    <section aria-labelledby="keys-title">
      <h1 id="keys-title">API keys</h1>
      {error && (
        <p role="alert" className="error">
          {error}
        </p>
      )}
      {created && <ShownOnce created={created} onDone={() => setCreated(undefined)} />}
      <div className="card">
        <h2>Test key</h2>
        {test ? (
          <TestKey k={test} onTokensOn={shown} onRenamed={refresh} overlapMs={overlapMs} />
        ) : (
          <CreateKeyForm kind="test" onCreated={shown} label="Generate the Test key" />
        )}
        <p className="hint">
          One Test key per account, valid 4 hours from generation. It cannot be generated again
          here: contact support to reset it.
        </p>
      </div>
      <div className="card">
        <h2>Live keys</h2>
        {paid ? (
          <CreateKeyForm kind="live" onCreated={shown} label="Create a Live key" />
        ) : (
          <p className="hint">
            Live keys need a paid plan{account.status === 'lapsed' ? ' (yours has lapsed)' : ''}:
            see the Plan tab.
          </p>
        )}
        {live.length > 0 && (
          <div className="table-wrap">
            <table>
              <caption className="sr-only">Live keys</caption>
              <thead>
                <tr>
                  <th scope="col">Name</th>
                  <th scope="col">Key</th>
                  <th scope="col">Client</th>
                  <th scope="col">Scope</th>
                  <th scope="col">Mode</th>
                  <th scope="col">Created</th>
                  <th scope="col">Last used</th>
                  <th scope="col">State</th>
                  <th scope="col">
                    <span className="sr-only">Actions</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {live.map((k) => [
                  <tr key={k.id}>
                    <td>
                      <KeyName k={k} onRenamed={refresh} />
                    </td>
                    <td className="nowrap">
                      <code>{k.key_prefix}…</code>
                    </td>
                    <td>{k.client === 'web' ? `web (${k.domain})` : 'mobile'}</td>
                    <td data-testid="key-scope">{scopeText(k)}</td>
                    <td data-testid="key-mode">{modeText(k)}</td>
                    <td className="nowrap">{when(k.created_at)}</td>
                    <td className="nowrap">{when(k.last_used_at)}</td>
                    <td data-testid="key-state">{liveKeyState(k, account)}</td>
                    <td>
                      {!k.revoked_at && k.require_token && (
                        <RotateSecretButton k={k} overlapMs={overlapMs} onRotated={shown} />
                      )}{' '}
                      {!k.revoked_at && <RevokeButton k={k} onRevoked={refresh} />}
                    </td>
                  </tr>,
                  k.token_warning && (
                    <tr key={`${k.id}-warning`}>
                      <td colSpan={9}>
                        <TokenWarning k={k} onTokensOn={shown} />
                      </td>
                    </tr>
                  ),
                ])}
              </tbody>
            </table>
          </div>
        )}
      </div>
    </section>
  );
}

/** The key's scope, and whether its sockets need a recipient token. */
export function scopeText(k: Key): string {
  return `${k.scope ?? 'both'}${k.require_token ? ', tokens required' : ''}`;
}

/** The key's mode and retention: an inbox keeps every event N days; the default stores none live. */
export function modeText(k: Key): string {
  const mode = k.inbox_days ? `inbox, ${k.inbox_days} days` : 'default: live events not stored';
  return k.webhook_payload ? `${mode}; payloads in webhooks` : mode;
}

/** What a Live key does now: works, refused until the plan is renewed, or revoked for good. */
function liveKeyState(k: Key, account: Account): string {
  if (k.revoked_at) return `revoked ${when(k.revoked_at)}`;
  if (account.status === 'active') return 'active';
  return account.status === 'lapsed'
    ? 'refused: the plan has lapsed'
    : 'refused: needs a paid plan';
}

/** The flag line of a web key without tokens, and the button that turns them on. */
function TokenWarning({ k, onTokensOn }: { k: Key; onTokensOn: (c: Created) => void }) {
  if (!k.token_warning) return null;
  return (
    <p className="warning" data-testid="key-warning">
      <span role="img" aria-label="Warning">
        ⚠
      </span>{' '}
      {k.token_warning} {k.scope !== 'dispatch' && <RequireTokenButton k={k} onDone={onTokensOn} />}
    </p>
  );
}

function TestKey({
  k,
  onTokensOn,
  onRenamed,
  overlapMs,
}: {
  k: Key;
  onTokensOn: (c: Created) => void;
  onRenamed: () => void;
  overlapMs: number | undefined;
}) {
  const now = useNow(1000);
  const left = k.expires_at ? Date.parse(k.expires_at) - now : 0;
  return (
    <dl className="facts">
      <dt>Name</dt>
      <dd>
        <KeyName k={k} onRenamed={onRenamed} />
      </dd>
      <dt>Key</dt>
      <dd>
        <code className="nowrap">{k.key_prefix}…</code> (
        {k.client === 'web' ? `web, ${k.domain}` : 'mobile'})
      </dd>
      <dt>Scope</dt>
      <dd data-testid="test-scope">{scopeText(k)}</dd>
      <dt>Mode</dt>
      <dd data-testid="test-mode">{modeText(k)}</dd>
      <dt>Expires in</dt>
      <dd data-testid="test-countdown">{left > 0 ? duration(left) : 'expired'}</dd>
      <dt>Last used</dt>
      <dd className="nowrap">{when(k.last_used_at)}</dd>
      <dt>Tokens</dt>
      <dd data-testid="test-tokens">
        <TestKeyTokens k={k} onTokensOn={onTokensOn} overlapMs={overlapMs} />
      </dd>
    </dl>
  );
}

/**
 * The Test key's recipient tokens: rotate its secret when it requires them, turn them on when it
 * can have them, and say why not for a key that only sends.
 */
function TestKeyTokens({
  k,
  onTokensOn,
  overlapMs,
}: {
  k: Key;
  onTokensOn: (c: Created) => void;
  overlapMs: number | undefined;
}) {
  if (k.revoked_at) return <>revoked</>;
  if (k.require_token) {
    return (
      <>
        required <RotateSecretButton k={k} overlapMs={overlapMs} onRotated={onTokensOn} />
      </>
    );
  }
  if (k.token_warning) return <TokenWarning k={k} onTokensOn={onTokensOn} />;
  if (k.scope === 'dispatch') {
    return <>not needed: a dispatch key opens no sockets, so there is no recipient to sign for</>;
  }
  return (
    <>
      not required <RequireTokenButton k={k} onDone={onTokensOn} />
    </>
  );
}

function RevokeButton({ k, onRevoked }: { k: Key; onRevoked: () => void }) {
  const [error, setError] = useState('');
  return (
    <>
      <button
        type="button"
        className="danger"
        aria-label={`Revoke key ${k.key_prefix}`}
        onClick={async () => {
          if (!confirm(`Revoke ${keyLabel(k)}? Requests with it are refused at once.`)) return;
          try {
            await api('DELETE', `/v1/keys/${k.id}`);
            onRevoked();
          } catch (err) {
            setError(errorText(err));
          }
        }}
      >
        Revoke
      </button>
      {error && <span className="error">{error}</span>}
    </>
  );
}

export function when(iso: string | null | undefined): string {
  return iso ? new Date(iso).toLocaleString() : 'never';
}

function duration(ms: number): string {
  const s = Math.floor(ms / 1000);
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  return `${h}h ${String(m).padStart(2, '0')}m ${String(s % 60).padStart(2, '0')}s`;
}
