import { type FormEvent, useState } from 'react';
import {
  api,
  errorText,
  fieldError,
  type Key,
  keyLabel,
  type PusherApp,
  type PusherAppSecret,
} from './api.js';
import { when } from './KeysPage.js';
import { USER_CHANNEL_EXAMPLE, userIdsText } from './pusher.js';

const LABELS = { key_id: 'Bound key', user_ids: 'User ids', user_channel: 'User channel' };

/** A key as the bound-key choice names it: kind, prefix, client (and domain). */
export function keyText(k: Key): string {
  const client = k.client === 'web' ? `web, ${k.domain}` : 'mobile';
  return `${k.kind === 'test' ? 'Test' : 'Live'} ${keyLabel(k)} (${client})`;
}

/** The key an app is bound to by default: the account's only Live key, as the API chooses. */
export function defaultKeyId(keys: Key[]): string {
  const live = keys.filter((k) => k.kind === 'live' && !k.revoked_at);
  return live.length === 1 ? (live[0]?.id ?? '') : '';
}

/** `POST /v1/pusher/apps`: the bound key, how user ids map, an optional user channel. */
export function CreateAppForm({
  keys,
  onCreated,
}: {
  keys: Key[];
  onCreated: (s: PusherAppSecret) => void;
}) {
  const usable = keys.filter((k) => !k.revoked_at);
  const [keyId, setKeyId] = useState('');
  const [userIds, setUserIds] = useState<PusherApp['user_ids']>('uuid');
  const [userChannel, setUserChannel] = useState('');
  const [error, setError] = useState('');
  const chosen = keyId || defaultKeyId(usable);
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setError('');
    try {
      const created = await api<PusherAppSecret>('POST', '/v1/pusher/apps', {
        key_id: chosen,
        user_ids: userIds,
        ...(userChannel.trim() ? { user_channel: userChannel.trim() } : {}),
      });
      setUserChannel('');
      onCreated(created);
    } catch (err) {
      setError(fieldError(err, LABELS));
    }
  };
  return (
    <form onSubmit={submit} aria-label="Create a Pusher app">
      <div className="inline">
        <label>
          {LABELS.key_id}
          <select value={chosen} onChange={(e) => setKeyId(e.target.value)} required>
            <option value="">Choose a key…</option>
            {usable.map((k) => (
              <option key={k.id} value={k.id}>
                {keyText(k)}
              </option>
            ))}
          </select>
        </label>
        <label>
          {LABELS.user_ids}
          <select
            value={userIds}
            onChange={(e) => setUserIds(e.target.value as PusherApp['user_ids'])}
          >
            <option value="uuid">uuid: each user id is a UUID v4, the recipient itself</option>
            <option value="any">any: any id (Laravel's integers), mapped to a recipient</option>
          </select>
        </label>
        <label>
          {LABELS.user_channel} (optional)
          <input
            value={userChannel}
            onChange={(e) => setUserChannel(e.target.value)}
            placeholder={USER_CHANNEL_EXAMPLE}
            size={32}
            autoComplete="off"
            aria-describedby="pusher-user-channel-hint"
          />
        </label>
      </div>
      <p className="hint" id="pusher-user-channel-hint">
        The app takes the bound key's plan, limits, scope and domain (a web key's domain is checked
        against the socket's Origin). A user channel is a <code>private-</code> channel with one{' '}
        <code>{'{id}'}</code>, such as <code>{USER_CHANNEL_EXAMPLE}</code> for Laravel's
        notifications: events to it are durable, as <code>sendToUser</code>'s are.
      </p>
      {usable.length === 0 && (
        <p className="hint">This account has no key yet: create one on the Keys tab first.</p>
      )}
      <button type="submit">Create app</button>
      {error && (
        <p role="alert" className="error">
          {error}
        </p>
      )}
    </form>
  );
}

/** One app: its id, key, bound key, user ids and channel; its snippets, a new secret, delete. */
export function AppRow({
  app: a,
  keys,
  snippetsShown,
  onSnippets,
  onChanged,
  onRotated,
}: {
  app: PusherApp;
  keys: Key[];
  snippetsShown: boolean;
  onSnippets: () => void;
  onChanged: () => Promise<void>;
  onRotated: (s: PusherAppSecret) => void;
}) {
  const [error, setError] = useState('');
  const bound = keys.find((k) => k.id === a.key_id);
  const path = `/v1/pusher/apps/${encodeURIComponent(a.app_id)}`;
  const act = async (question: string, what: () => Promise<void>) => {
    setError('');
    if (!confirm(question)) return;
    try {
      await what();
      await onChanged();
    } catch (err) {
      setError(errorText(err));
    }
  };
  return (
    <li className="endpoint" data-testid="pusher-app">
      <h3>
        App <code data-testid="pusher-app-id">{a.app_id}</code>
      </h3>
      <dl className="facts">
        <dt>Key</dt>
        <dd>
          <code data-testid="pusher-app-key">{a.key}</code>
        </dd>
        <dt>Bound key</dt>
        <dd data-testid="pusher-app-bound">{bound ? keyText(bound) : <code>{a.key_id}</code>}</dd>
        <dt>User ids</dt>
        <dd data-testid="pusher-app-user-ids">{userIdsText(a.user_ids)}</dd>
        <dt>User channel</dt>
        <dd data-testid="pusher-app-user-channel">
          {a.user_channel ? <code>{a.user_channel}</code> : 'none (#server-to-user only)'}
        </dd>
        <dt>Created</dt>
        <dd>{when(a.created_at)}</dd>
      </dl>
      <div className="inline actions">
        <button
          type="button"
          className="secondary"
          aria-expanded={snippetsShown}
          aria-controls="pusher-snippets"
          onClick={onSnippets}
        >
          {snippetsShown ? 'Hide snippets' : 'Show snippets'}
        </button>
        <button
          type="button"
          className="secondary"
          onClick={() =>
            act(
              `A new secret for app ${a.app_id}? The current one stops working: your server signs with the new one.`,
              async () => onRotated(await api<PusherAppSecret>('POST', `${path}/rotate-secret`)),
            )
          }
        >
          Rotate secret
        </button>
        <button
          type="button"
          className="danger"
          onClick={() =>
            act(
              `Delete app ${a.app_id}? Its sockets and HTTP requests are refused from now on.`,
              async () => api('DELETE', path),
            )
          }
        >
          Delete
        </button>
      </div>
      {error && (
        <p role="alert" className="error">
          {error}
        </p>
      )}
    </li>
  );
}
