import { useCallback, useEffect, useState } from 'react';
import { api, errorText } from './api.js';

interface TopicRow {
  topic: string;
  members: number;
  created_at: string;
}

/** A topic event with its progress: its copies counted by status (docs/api.md, "Topics"). */
interface TopicEventRow {
  id: string;
  topic: string;
  status: 'sent' | 'pending' | 'delivered' | 'failed';
  members: number;
  sent: number;
  pending: number;
  delivered: number;
  failed: number;
  created_at: string;
}

/** How often the page reads the fan-outs again while one is still pending. */
const REFRESH_MS = 3000;

/**
 * Topics (issue 44): the account's topics with their member counts (a page at a time, by name),
 * and its last topic events with their progress, read through the account API from the status
 * service. Membership is the API's (`PUT /topics/{topic}/members`); this page only shows it.
 */
export function TopicsPage() {
  const [topics, setTopics] = useState<TopicRow[] | undefined>();
  const [nextAfter, setNextAfter] = useState<string | null>(null);
  const [events, setEvents] = useState<TopicEventRow[]>([]);
  const [error, setError] = useState('');

  const refresh = useCallback(async () => {
    try {
      const [t, e] = await Promise.all([
        api<{ topics: TopicRow[]; next_after: string | null }>('GET', '/v1/dashboard/topics'),
        api<{ events: TopicEventRow[] }>('GET', '/v1/dashboard/topic-events'),
      ]);
      setTopics(t.topics);
      setNextAfter(t.next_after);
      setEvents(e.events);
      setError('');
    } catch (err) {
      setError(errorText(err));
    }
  }, []);
  useEffect(() => {
    void refresh();
  }, [refresh]);
  // While a fan-out is under way its counts move: read them again until none is pending.
  const running = events.some((e) => e.status === 'pending');
  useEffect(() => {
    if (!running) return;
    const timer = setInterval(() => void refresh(), REFRESH_MS);
    return () => clearInterval(timer);
  }, [running, refresh]);

  const more = async () => {
    if (!nextAfter) return;
    try {
      const t = await api<{ topics: TopicRow[]; next_after: string | null }>(
        'GET',
        `/v1/dashboard/topics?after=${encodeURIComponent(nextAfter)}`,
      );
      setTopics((old) => [...(old ?? []), ...t.topics]);
      setNextAfter(t.next_after);
    } catch (err) {
      setError(errorText(err));
    }
  };

  return (
    <section aria-labelledby="topics-title">
      <h1 id="topics-title">Topics</h1>
      <p className="hint">
        A topic is a named set of recipients: one <code>POST /notify</code> with{' '}
        <code>"topic"</code> sends every member their own copy. Manage members with{' '}
        <code>PUT /topics/{'{topic}'}/members</code> or the SDK's <code>topics.add</code>.
      </p>
      {error && (
        <p role="alert" className="error">
          {error}
        </p>
      )}
      <div className="card">
        <h2>Topics</h2>
        {topics === undefined ? (
          !error && <p className="loading">Loading…</p>
        ) : (
          <div className="table-wrap">
            <table className="stack-narrow">
              <caption className="sr-only">Topics and their member counts</caption>
              <thead>
                <tr>
                  <th scope="col">Topic</th>
                  <th scope="col">Members</th>
                  <th scope="col">Created</th>
                </tr>
              </thead>
              <tbody>
                {topics.length === 0 && (
                  <tr>
                    <td colSpan={3}>No topics yet.</td>
                  </tr>
                )}
                {topics.map((t) => (
                  <tr key={t.topic} data-testid="topic-row">
                    <td data-label="Topic">
                      <code>{t.topic}</code>
                    </td>
                    <td data-label="Members" data-testid="topic-members">
                      {t.members.toLocaleString()}
                    </td>
                    <td data-label="Created">{new Date(t.created_at).toLocaleString()}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
        {nextAfter && (
          <button type="button" onClick={more}>
            More topics
          </button>
        )}
      </div>
      <div className="card">
        <h2>Last fan-outs</h2>
        <p className="hint">
          Each member's copy is counted by its status; the fan-out is pending until every copy has
          one. Payloads are never stored or shown.{' '}
          <button type="button" onClick={() => void refresh()}>
            Refresh
          </button>
        </p>
        <div className="table-wrap">
          <table className="stack-narrow">
            <caption className="sr-only">Last topic events and their progress</caption>
            <thead>
              <tr>
                <th scope="col">Event id</th>
                <th scope="col">Topic</th>
                <th scope="col">Status</th>
                <th scope="col">Members</th>
                <th scope="col">Sent</th>
                <th scope="col">Pending</th>
                <th scope="col">Delivered</th>
                <th scope="col">Failed</th>
                <th scope="col">Accepted</th>
              </tr>
            </thead>
            <tbody>
              {events.length === 0 && (
                <tr>
                  <td colSpan={9}>No topic events.</td>
                </tr>
              )}
              {events.map((e) => (
                <tr key={e.id} data-testid="fanout-row">
                  <td data-label="Event id">
                    <code>{e.id}</code>
                  </td>
                  <td data-label="Topic">
                    <code>{e.topic}</code>
                  </td>
                  <td data-label="Status">
                    <span className={`badge ${e.status}`}>{e.status}</span>
                  </td>
                  {(['members', 'sent', 'pending', 'delivered', 'failed'] as const).map((k) => (
                    <td key={k} data-label={k} data-testid={`fanout-${k}`}>
                      {e[k].toLocaleString()}
                    </td>
                  ))}
                  <td data-label="Accepted">{new Date(e.created_at).toLocaleString()}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      </div>
    </section>
  );
}
