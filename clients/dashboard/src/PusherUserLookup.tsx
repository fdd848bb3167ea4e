import { type FormEvent, useEffect, useState } from 'react';
import { api, fieldError, type PusherApp } from './api.js';

/** `GET /v1/pusher/apps/:app_id/users/:user_id`: the recipient a Pusher user's events go to. */
interface UserMapping {
  user_id: string;
  recipient: string;
}

const LABELS = { app_id: 'Pusher app', user_id: 'Pusher user id' };

/**
 * The delivery page's Pusher user lookup (issue 41): a Pusher app's user id (`user_data.id`, or
 * the `{id}` of its user channel) is a Herald recipient, the id itself or one derived from it
 * (`--user-ids any`). This names the recipient and hands it to the events lookup. Shown only to an
 * account with apps.
 */
export function PusherUserLookup({ onRecipient }: { onRecipient: (recipient: string) => void }) {
  const [apps, setApps] = useState<PusherApp[]>([]);
  const [found, setFound] = useState<(UserMapping & { app_id: string }) | undefined>();
  const [error, setError] = useState('');
  useEffect(() => {
    // Nothing to show when the account has no apps, or this server has no Pusher door.
    api<{ apps: PusherApp[] }>('GET', '/v1/pusher/apps').then(
      (r) => setApps(r.apps),
      () => setApps([]),
    );
  }, []);
  if (apps.length === 0) return null;

  const submit = async (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault();
    const f = new FormData(e.currentTarget);
    const appId = String(f.get('app_id') ?? '');
    const userId = String(f.get('user_id') ?? '').trim();
    setFound(undefined);
    setError('');
    if (!userId) {
      setError(`${LABELS.user_id}: give the id your app signs users in with (user_data.id).`);
      return;
    }
    try {
      const path = `/v1/pusher/apps/${encodeURIComponent(appId)}/users/${encodeURIComponent(userId)}`;
      setFound({ ...(await api<UserMapping>('GET', path)), app_id: appId });
    } catch (err) {
      setError(fieldError(err, LABELS));
    }
  };

  return (
    <div className="card">
      <h2>Pusher user</h2>
      <form className="inline" onSubmit={submit} aria-label="Pusher user lookup">
        <label>
          {LABELS.app_id}
          <select name="app_id">
            {apps.map((a) => (
              <option key={a.app_id} value={a.app_id}>
                {a.app_id} ({a.user_ids === 'uuid' ? 'UUID user ids' : 'any user ids'})
              </option>
            ))}
          </select>
        </label>
        <label>
          {LABELS.user_id}
          <input name="user_id" autoComplete="off" placeholder="user_data.id, e.g. 42" />
        </label>
        <button type="submit">Look up user</button>
      </form>
      {error && (
        <p role="alert" className="error">
          {error}
        </p>
      )}
      {found && (
        <p data-testid="pusher-user-mapping">
          User <code>{found.user_id}</code> of app <code>{found.app_id}</code> is recipient{' '}
          <code data-testid="pusher-user-recipient">{found.recipient}</code>{' '}
          <button type="button" className="secondary" onClick={() => onRecipient(found.recipient)}>
            Show its events
          </button>
        </p>
      )}
    </div>
  );
}
