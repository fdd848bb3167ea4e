import { type FormEvent, useCallback, useEffect, useState } from 'react';
import {
  api,
  errorText,
  type WebhookAttempt,
  type WebhookEndpoint,
  type WithSecret,
} from './api.js';
import { when } from './KeysPage.js';

/** Attempts the page shows per endpoint, newest first. */
const ATTEMPTS_SHOWN = 20;

/** Active, failing since when, or disabled with when and why. */
export function endpointState(e: WebhookEndpoint): string {
  if (e.disabled_at) return `disabled ${when(e.disabled_at)}: ${e.disabled_reason ?? 'no reason'}`;
  if (e.failing_since) return `active, failing since ${when(e.failing_since)}`;
  return 'active';
}

/**
 * One endpoint: its URL, events and state, what waits, and its actions: send a test event,
 * replay since a time, show its recent attempts, a new secret, enable (when disabled), delete.
 */
export function EndpointRow({
  endpoint: e,
  onChanged,
  onRotated,
}: {
  endpoint: WebhookEndpoint;
  onChanged: () => Promise<void>;
  onRotated: (e: WithSecret) => void;
}) {
  const [note, setNote] = useState('');
  const [error, setError] = useState('');
  const [attemptsOpen, setAttemptsOpen] = useState(false);
  const [attemptsVersion, setAttemptsVersion] = useState(0);
  const act = async (what: () => Promise<string | undefined>) => {
    setError('');
    setNote('');
    try {
      const said = await what();
      if (said) setNote(said);
      setAttemptsVersion((v) => v + 1);
      await onChanged();
    } catch (err) {
      setError(errorText(err));
    }
  };
  const path = `/v1/webhooks/${e.id}`;

  return (
    <li className="endpoint" data-testid="webhook-endpoint">
      <p>
        <code>{e.url}</code>{' '}
        <span
          className={`badge ${e.disabled_at ? 'failed' : e.failing_since ? 'pending' : 'delivered'}`}
        >
          {e.disabled_at ? 'disabled' : e.failing_since ? 'failing' : 'active'}
        </span>
      </p>
      <dl className="facts">
        <dt>Events</dt>
        <dd data-testid="webhook-events">{e.events.join(', ')}</dd>
        <dt>State</dt>
        <dd data-testid="webhook-state">{endpointState(e)}</dd>
        <dt>Waiting</dt>
        <dd data-testid="webhook-pending">{e.pending}</dd>
      </dl>
      <div className="inline actions">
        <button
          type="button"
          onClick={() =>
            act(async () => {
              await api('POST', `${path}/test`);
              setAttemptsOpen(true);
              return 'Test event queued: its attempt shows below.';
            })
          }
        >
          Send a test event
        </button>
        <button
          type="button"
          className="secondary"
          aria-expanded={attemptsOpen}
          onClick={() => setAttemptsOpen(!attemptsOpen)}
        >
          {attemptsOpen ? 'Hide attempts' : 'Recent attempts'}
        </button>
        {e.disabled_at && (
          <button
            type="button"
            className="secondary"
            onClick={() =>
              act(async () => {
                await api('POST', `${path}/enable`);
                return 'Enabled: replay since it was disabled to send what it missed.';
              })
            }
          >
            Enable
          </button>
        )}
        <button
          type="button"
          className="secondary"
          onClick={() =>
            act(async () => {
              if (
                !confirm(`A new secret for ${e.url}? The old one keeps signing beside it for 24 h.`)
              )
                return undefined;
              onRotated(await api<WithSecret>('POST', `${path}/rotate-secret`));
              return undefined;
            })
          }
        >
          Rotate secret
        </button>
        <button
          type="button"
          className="danger"
          onClick={() =>
            act(async () => {
              if (!confirm(`Delete the endpoint ${e.url}? Nothing more is sent to it.`))
                return undefined;
              await api('DELETE', path);
              return undefined;
            })
          }
        >
          Delete
        </button>
      </div>
      <ReplayForm
        onReplay={(since) =>
          act(async () => {
            const { queued } = await api<{ queued: number }>('POST', `${path}/replay`, { since });
            return `Replay queued ${queued} message(s).`;
          })
        }
      />
      {note && <p role="status">{note}</p>}
      {error && (
        <p role="alert" className="error">
          {error}
        </p>
      )}
      {attemptsOpen && <Attempts key={attemptsVersion} path={path} onRead={onChanged} />}
    </li>
  );
}

function ReplayForm({ onReplay }: { onReplay: (since: string) => Promise<void> }) {
  const [since, setSince] = useState('');
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    // The input is local time; the API takes an instant with its zone.
    await onReplay(new Date(since).toISOString());
  };
  return (
    <form className="inline" onSubmit={submit}>
      <label>
        Replay since
        <input
          type="datetime-local"
          value={since}
          onChange={(e) => setSince(e.target.value)}
          required
        />
      </label>
      <button type="submit" className="secondary">
        Replay
      </button>
    </form>
  );
}

/**
 * The endpoint's recent attempts, read again every 2 s while shown (and anew after an action);
 * `onRead` then re-reads the endpoints, whose state and waiting count the attempts change.
 */
function Attempts({ path, onRead }: { path: string; onRead: () => Promise<void> }) {
  const [attempts, setAttempts] = useState<WebhookAttempt[] | undefined>();
  const [error, setError] = useState('');
  const load = useCallback(async () => {
    try {
      const r = await api<{ attempts: WebhookAttempt[] }>(
        'GET',
        `${path}/attempts?limit=${ATTEMPTS_SHOWN}`,
      );
      setAttempts(r.attempts);
      setError('');
      await onRead();
    } catch (err) {
      setError(errorText(err));
    }
  }, [path, onRead]);
  useEffect(() => {
    void load();
    const timer = setInterval(() => void load(), 2000);
    return () => clearInterval(timer);
  }, [load]);

  if (error) return <p className="error">{error}</p>;
  if (!attempts) return <p className="loading">Loading attempts…</p>;
  if (attempts.length === 0) return <p className="hint">No attempts yet.</p>;
  return (
    <div className="table-wrap">
      <table data-testid="webhook-attempts">
        <caption className="sr-only">Recent attempts, newest first</caption>
        <thead>
          <tr>
            <th scope="col">Time</th>
            <th scope="col">Type</th>
            <th scope="col">Result</th>
            <th scope="col">Latency</th>
            <th scope="col">Message</th>
          </tr>
        </thead>
        <tbody>
          {attempts.map((a) => (
            <tr key={`${a.at}-${a.message_id}`}>
              <td>{when(a.at)}</td>
              <td>{a.type}</td>
              <td>{a.http_status === null ? (a.error ?? 'no answer') : `HTTP ${a.http_status}`}</td>
              <td>{a.latency_ms} ms</td>
              <td>
                <code>{a.message_id}</code>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
