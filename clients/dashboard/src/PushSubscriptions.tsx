import { type FormEvent, useCallback, useEffect, useState } from 'react';
import { api, errorText, type PushSubscription } from './api.js';
import { when } from './KeysPage.js';
import { fieldError, type PushTestResult, testOutcome } from './push.js';

/**
 * A recipient's push subscriptions (`GET /v1/push/subscriptions?recipient=`): kind, device, the
 * key that registered it, created and last pushed; per subscription a test push now (its outcome
 * as the push service answered) and delete.
 */
export function PushSubscriptions() {
  const [recipient, setRecipient] = useState('');
  const [subs, setSubs] = useState<PushSubscription[] | undefined>();
  const [outcome, setOutcome] = useState<Record<string, string>>({});
  const [error, setError] = useState('');

  const load = useCallback(async (who: string) => {
    if (!who) {
      setSubs(undefined);
      return;
    }
    try {
      const r = await api<{ subscriptions: PushSubscription[] }>(
        'GET',
        `/v1/push/subscriptions?recipient=${encodeURIComponent(who)}`,
      );
      setSubs(r.subscriptions);
      setError('');
    } catch (err) {
      setError(fieldError(err, { recipient: 'Recipient' }));
    }
  }, []);
  useEffect(() => {
    void load(recipient);
  }, [load, recipient]);

  const find = (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault();
    const who = String(new FormData(e.currentTarget).get('recipient') ?? '').trim();
    setOutcome({});
    if (!who) {
      setError('Recipient: give the recipient id your app notifies.');
      return;
    }
    if (who === recipient) void load(who);
    else setRecipient(who);
  };

  const test = async (s: PushSubscription) => {
    setOutcome((o) => ({ ...o, [s.id]: 'Sending…' }));
    try {
      const r = await api<PushTestResult>('POST', `/v1/push/subscriptions/${s.id}/test`);
      setOutcome((o) => ({ ...o, [s.id]: testOutcome(r) }));
      await load(recipient);
    } catch (err) {
      setOutcome((o) => ({ ...o, [s.id]: `Not sent: ${errorText(err)}` }));
    }
  };
  const remove = async (s: PushSubscription) => {
    if (!confirm(`Delete this ${s.kind} subscription? Nothing more is pushed to it.`)) return;
    try {
      await api('DELETE', `/v1/push/subscriptions/${s.id}`);
      await load(recipient);
    } catch (err) {
      setError(errorText(err));
    }
  };

  return (
    <div className="card">
      <h2>Subscriptions</h2>
      <form className="inline" onSubmit={find} aria-label="Find subscriptions">
        <label>
          Recipient
          <input name="recipient" autoComplete="off" placeholder="the recipient id (a UUID)" />
        </label>
        <button type="submit">Find subscriptions</button>
      </form>
      {error && (
        <p role="alert" className="error">
          {error}
        </p>
      )}
      {subs !== undefined && (
        <div className="table-wrap">
          <table className="stack-narrow">
            <caption className="sr-only">Push subscriptions of {recipient}</caption>
            <thead>
              <tr>
                <th scope="col">Kind</th>
                <th scope="col">Device</th>
                <th scope="col">Key</th>
                <th scope="col">Created</th>
                <th scope="col">Last pushed</th>
                <th scope="col">Actions</th>
              </tr>
            </thead>
            <tbody>
              {subs.length === 0 && (
                <tr>
                  <td colSpan={6}>No subscriptions for this recipient.</td>
                </tr>
              )}
              {subs.map((s) => (
                <tr key={s.id} data-testid="push-subscription">
                  <td data-label="Kind">
                    {s.kind}
                    {s.endpoint_origin ? (
                      <>
                        {' '}
                        <code>{s.endpoint_origin}</code>
                      </>
                    ) : null}
                  </td>
                  <td data-label="Device">{s.device ?? '—'}</td>
                  <td data-label="Key">
                    <code>{s.key_id}</code>
                  </td>
                  <td data-label="Created">{when(s.created_at)}</td>
                  <td data-label="Last pushed">{when(s.last_success_at)}</td>
                  <td data-label="Actions">
                    <button type="button" onClick={() => void test(s)}>
                      Send test push
                    </button>{' '}
                    <button type="button" onClick={() => void remove(s)}>
                      Delete
                    </button>
                    {outcome[s.id] && (
                      <p role="status" data-testid="push-test-outcome">
                        {outcome[s.id]}
                      </p>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </div>
  );
}
