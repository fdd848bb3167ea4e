import { type FormEvent, useCallback, useEffect, useRef, useState } from 'react';
import { api, type Counts, type EventView, errorText, type Key, keyLabel } from './api.js';
import { when } from './KeysPage.js';
import { PusherUserLookup } from './PusherUserLookup.js';
import { pushedText } from './push.js';
import { RecentRefusals } from './RecentRefusals.js';
import { StatusChart } from './StatusChart.js';

type Window = 'hour' | 'day' | 'week';

/** How often the open page fetches its figures again (while the tab is visible). */
export const DELIVERY_REFRESH_MS = 5000;

/** What each count's tile calls it: a live event answered 200 was proven received. */
const TILE_TEXT = {
  sent: 'delivered live',
  pending: 'queued (pending)',
  delivered: 'delivered from the queue',
  failed: 'failed',
} as const;

/**
 * A live event answered 200 waited for a socket's proof of receipt: it reads as delivered, at
 * the time of that proof, as a queued one does once delivered.
 */
function deliveredAt(e: EventView): string | null | undefined {
  return e.delivered_at ?? (e.status === 'sent' ? e.sent_at : null);
}

export function DeliveryPage() {
  const [keys, setKeys] = useState<Key[]>([]);
  const [keyId, setKeyId] = useState('');
  const [span, setSpan] = useState<Window>('hour');
  const [counts, setCounts] = useState<Counts | undefined>();
  const [series, setSeries] = useState<Array<Counts & { t: string }>>([]);
  const [conns, setConns] = useState<{ live: number; test: number } | undefined>();
  const [events, setEvents] = useState<EventView[]>([]);
  const [lookup, setLookup] = useState({ id: '', recipient: '' });
  const [error, setError] = useState('');
  // Each refresh's number: the recent refusals fetch again with the page's figures.
  const [tick, setTick] = useState(0);

  useEffect(() => {
    api<{ keys: Key[] }>('GET', '/v1/dashboard/keys')
      .then((r) => setKeys(r.keys))
      .catch((err) => setError(errorText(err)));
  }, []);

  // Refreshes overlap (the timer, Refresh, a new filter): only the latest one's answer is shown.
  const latest = useRef(0);
  const refresh = useCallback(async () => {
    const mine = ++latest.current;
    const key = keyId ? `&key_id=${encodeURIComponent(keyId)}` : '';
    const find = [
      lookup.id ? `&id=${encodeURIComponent(lookup.id.trim())}` : '',
      lookup.recipient ? `&recipient=${encodeURIComponent(lookup.recipient.trim())}` : '',
    ].join('');
    try {
      const [s, e, c] = await Promise.all([
        api<{ counts: Counts; series: Array<Counts & { t: string }> }>(
          'GET',
          `/v1/dashboard/status?window=${span}${key}`,
        ),
        api<{ events: EventView[] }>('GET', `/v1/dashboard/events?limit=50${key}${find}`),
        api<{ live: number; test: number }>('GET', '/v1/dashboard/connections'),
      ]);
      if (mine !== latest.current) return;
      setError('');
      setCounts(s.counts);
      setSeries(s.series);
      setEvents(e.events);
      setConns(c);
      setTick((t) => t + 1);
    } catch (err) {
      if (mine === latest.current) setError(errorText(err));
    }
  }, [keyId, span, lookup]);
  useEffect(() => {
    void refresh();
    // The page keeps itself current while open; a hidden tab does not poll.
    const timer = setInterval(() => {
      if (document.visibilityState === 'visible') void refresh();
    }, DELIVERY_REFRESH_MS);
    return () => clearInterval(timer);
  }, [refresh]);

  const selected = keys.find((k) => k.id === keyId);
  // Push fallback (issue 40): a Pushed column only while an event listed was pushed.
  const pushedShown = events.some((e) => e.pushed);
  const open = !conns
    ? '…'
    : !selected
      ? conns.live + conns.test
      : selected.kind === 'test'
        ? conns.test
        : conns.live;
  const submitLookup = (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault();
    const f = new FormData(e.currentTarget);
    setLookup({ id: String(f.get('id') ?? ''), recipient: String(f.get('recipient') ?? '') });
  };

  return (
    <section aria-labelledby="delivery-title">
      <h1 id="delivery-title">Delivery status</h1>
      <div className="card inline">
        <label>
          Key
          <select value={keyId} onChange={(e) => setKeyId(e.target.value)}>
            <option value="">All keys</option>
            {keys.map((k) => (
              <option key={k.id} value={k.id}>
                {k.kind === 'test' ? 'Test' : 'Live'} {keyLabel(k)}
                {k.revoked_at ? ' (revoked)' : ''}
              </option>
            ))}
          </select>
        </label>
        <label>
          Window
          <select value={span} onChange={(e) => setSpan(e.target.value as Window)}>
            <option value="hour">last hour</option>
            <option value="day">last day</option>
            <option value="week">last week</option>
          </select>
        </label>
        <button type="button" onClick={() => void refresh()}>
          Refresh
        </button>
      </div>
      {error && (
        <p role="alert" className="error">
          {error}
        </p>
      )}
      <ul className="tiles" aria-label="Counts in the window">
        {(['sent', 'pending', 'delivered', 'failed'] as const).map((s) => (
          <li key={s} className={`tile ${s}`}>
            <span className="n" data-testid={`count-${s}`}>
              {counts?.[s] ?? '…'}
            </span>
            <span>{TILE_TEXT[s]}</span>
          </li>
        ))}
        <li className="tile">
          <span className="n" data-testid="open-connections">
            {open}
          </span>
          <span>
            {open === 1 ? 'open connection' : 'open connections'}
            {selected?.kind === 'live' ? ' (all Live keys)' : ''}
          </span>
        </li>
      </ul>
      <p className="hint">
        Counts are transitions in the window: an event queued and then delivered counts once as
        queued and once as delivered from the queue. A live event answered 200 was proven received
        by a socket before the answer: it counts as delivered live. The page refreshes itself every{' '}
        {DELIVERY_REFRESH_MS / 1000} s.
      </p>
      <div className="card">
        <h2>Over time</h2>
        <StatusChart series={series} />
      </div>
      <RecentRefusals selected={selected} tick={tick} />
      <PusherUserLookup onRecipient={(recipient) => setLookup({ id: '', recipient })} />
      <div className="card">
        <h2>Recent events</h2>
        {/* Keyed by the lookup: a recipient handed over by the Pusher user lookup shows in it. */}
        <form
          key={`${lookup.id}|${lookup.recipient}`}
          className="inline"
          onSubmit={submitLookup}
          aria-label="Find events"
        >
          <label>
            Event id
            <input name="id" defaultValue={lookup.id} autoComplete="off" />
          </label>
          <label>
            Recipient
            <input name="recipient" defaultValue={lookup.recipient} autoComplete="off" />
          </label>
          <button type="submit">Find</button>
          <button
            type="reset"
            className="secondary"
            onClick={() => setLookup({ id: '', recipient: '' })}
          >
            Clear
          </button>
        </form>
        <p className="hint" data-testid="payload-note">
          Payloads are never shown here. An inbox key keeps each event's payload for its inbox days
          (read through the SDK's inbox); other keys keep a payload only while its event waits in
          the queue.
        </p>
        {/* Stacked under 600 px (styles/narrow.css): each cell on its own line, after its label. */}
        <div className="table-wrap">
          <table className="stack-narrow">
            <caption className="sr-only">Recent events</caption>
            <thead>
              <tr>
                <th scope="col">Event id</th>
                <th scope="col">Recipient</th>
                <th scope="col">Status</th>
                <th scope="col">Sent / queued</th>
                <th scope="col">Delivered / failed</th>
                {pushedShown && <th scope="col">Pushed</th>}
              </tr>
            </thead>
            <tbody>
              {events.length === 0 && (
                <tr>
                  <td colSpan={5}>No events.</td>
                </tr>
              )}
              {events.map((e) => (
                <tr key={e.id} data-testid="event-row">
                  <td data-label="Event id">
                    <code>{e.id}</code>
                  </td>
                  <td data-label="Recipient">
                    <code>{e.recipient ?? '—'}</code>
                  </td>
                  <td data-label="Status">
                    <span className={`badge ${e.status === 'sent' ? 'delivered' : e.status}`}>
                      {e.status === 'sent' ? 'delivered live' : e.status}
                    </span>
                  </td>
                  <td data-label="Sent / queued">{when(e.sent_at ?? e.queued_at)}</td>
                  <td data-label="Delivered / failed">
                    {deliveredAt(e)
                      ? when(deliveredAt(e))
                      : e.failed_at
                        ? `${when(e.failed_at)} (${e.reason})`
                        : '—'}
                  </td>
                  {pushedShown && (
                    <td data-label="Pushed" data-testid="event-pushed">
                      {pushedText(e.pushed, when)}
                    </td>
                  )}
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      </div>
    </section>
  );
}
