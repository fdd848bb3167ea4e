import { useCallback, useEffect, useState } from 'react';
import { api, errorText, type PushCredentials } from './api.js';
import { ApnsForm, FcmForm } from './PushForms.js';
import { PushSubscriptions } from './PushSubscriptions.js';
import { fieldError } from './push.js';

/**
 * Push fallback (issue 40, docs/api.md "Push"): the account's credentials per provider (their
 * public parts only: the private keys are sealed by the status service and never shown), a new
 * VAPID key pair, an FCM service account and an APNs key uploaded from files, and a recipient's
 * subscriptions with a test push and delete.
 */
export function PushPage() {
  const [creds, setCreds] = useState<PushCredentials | undefined>();
  const [error, setError] = useState('');
  const refresh = useCallback(async () => {
    try {
      setCreds(await api<PushCredentials>('GET', '/v1/push'));
      setError('');
    } catch (err) {
      setError(errorText(err));
    }
  }, []);
  useEffect(() => {
    void refresh();
  }, [refresh]);

  return (
    <section aria-labelledby="push-title">
      <h1 id="push-title">Push</h1>
      <p className="hint">
        Events of a key made with <code>push_after_ms</code> that no socket proved in time are
        pushed to their recipient's subscriptions (Web Push, FCM, APNs). Private keys are sealed
        when uploaded and never shown again.
      </p>
      {error && (
        <p role="alert" className="error">
          {error}
        </p>
      )}
      {creds === undefined ? (
        !error && <p className="loading">Loading…</p>
      ) : (
        <>
          <p data-testid="push-subscription-count">
            {creds.subscriptions} {creds.subscriptions === 1 ? 'subscription' : 'subscriptions'} in
            all.
          </p>
          <WebPushCard creds={creds} onChanged={refresh} />
          <div className="card">
            <h2>Firebase Cloud Messaging (Android, FCM)</h2>
            <dl className="facts" data-testid="push-fcm">
              <dt>State</dt>
              <dd>{creds.fcm.configured ? 'configured' : 'not configured'}</dd>
              <dt>Project</dt>
              <dd data-testid="push-fcm-project">{creds.fcm.project_id ?? '—'}</dd>
              <dt>Client e-mail</dt>
              <dd data-testid="push-fcm-email">{creds.fcm.client_email ?? '—'}</dd>
            </dl>
            <FcmForm onSaved={refresh} />
          </div>
          <div className="card">
            <h2>Apple Push Notification service (iOS, APNs)</h2>
            <dl className="facts" data-testid="push-apns">
              <dt>State</dt>
              <dd>{creds.apns.configured ? 'configured' : 'not configured'}</dd>
              <dt>Key id</dt>
              <dd>{creds.apns.key_id ?? '—'}</dd>
              <dt>Team id</dt>
              <dd>{creds.apns.team_id ?? '—'}</dd>
              <dt>Topic</dt>
              <dd>{creds.apns.topic ?? '—'}</dd>
              <dt>Environment</dt>
              <dd>
                {creds.apns.configured ? (creds.apns.sandbox ? 'sandbox' : 'production') : '—'}
              </dd>
            </dl>
            <ApnsForm onSaved={refresh} />
          </div>
        </>
      )}
      <PushSubscriptions />
    </section>
  );
}

function WebPushCard({
  creds,
  onChanged,
}: {
  creds: PushCredentials;
  onChanged: () => Promise<void>;
}) {
  const [subject, setSubject] = useState('');
  const [error, setError] = useState('');
  const [note, setNote] = useState('');
  const generate = async () => {
    setError('');
    setNote('');
    if (
      creds.webpush.configured &&
      !confirm('A new key pair ends every existing Web Push subscription. Generate one anyway?')
    ) {
      return;
    }
    try {
      const body = subject.trim() ? { subject: subject.trim() } : {};
      await api('POST', '/v1/push/vapid', body);
      setNote('New VAPID key pair generated.');
      await onChanged();
    } catch (err) {
      setError(fieldError(err, { subject: 'Subject' }));
    }
  };
  return (
    <div className="card">
      <h2>Web Push (browsers, VAPID)</h2>
      <dl className="facts" data-testid="push-webpush">
        <dt>State</dt>
        <dd>{creds.webpush.configured ? 'configured' : 'not configured'}</dd>
        <dt>Public key</dt>
        <dd>
          <code className="secret" data-testid="push-vapid-public-key">
            {creds.webpush.public_key ?? '—'}
          </code>
        </dd>
        <dt>Subject</dt>
        <dd data-testid="push-vapid-subject">{creds.webpush.subject ?? '—'}</dd>
      </dl>
      <div className="inline">
        <label>
          Subject (optional)
          <input
            value={subject}
            onChange={(e) => setSubject(e.target.value)}
            placeholder="mailto:ops@example.com"
            autoComplete="off"
          />
        </label>
        <button type="button" onClick={() => void generate()}>
          Generate VAPID key
        </button>
      </div>
      {note && <p role="status">{note}</p>}
      {error && (
        <p role="alert" className="error">
          {error}
        </p>
      )}
    </div>
  );
}
