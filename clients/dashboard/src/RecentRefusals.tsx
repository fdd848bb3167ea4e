import { useEffect, useRef, useState } from 'react';
import { api, errorText, type Key, keyLabel } from './api.js';
import { when } from './KeysPage.js';

/** One row of `GET /v1/dashboard/refusals`: identical refusals of the key, with a count. */
export interface RefusalView {
  status: number;
  code: string;
  field: string | null;
  origin: string | null;
  route: string;
  count: number;
  first_at: string;
  last_at: string;
}

/**
 * The chosen key's recent refusals (issue 45): what ingress refused for it (time, HTTP status and
 * code, field, Origin, route, count). Fetched again on each of the page's refreshes (`tick`).
 * Never a payload, never the key: the key is named by its name and prefix.
 */
export function RecentRefusals({ selected, tick }: { selected: Key | undefined; tick: number }) {
  const [rows, setRows] = useState<RefusalView[] | undefined>();
  const [error, setError] = useState('');
  const latest = useRef(0);
  const keyId = selected?.id;

  useEffect(() => {
    const mine = ++latest.current;
    if (!keyId || tick < 0) {
      setRows(undefined);
      return;
    }
    api<{ refusals: RefusalView[] }>(
      'GET',
      `/v1/dashboard/refusals?key_id=${encodeURIComponent(keyId)}`,
    )
      .then((r) => {
        if (mine !== latest.current) return;
        setError('');
        setRows(r.refusals);
      })
      .catch((err) => {
        if (mine === latest.current) setError(errorText(err));
      });
  }, [keyId, tick]);

  return (
    <div className="card" data-testid="refusals">
      <h2>Recent refusals{selected ? ` of ${keyLabel(selected)}` : ''}</h2>
      <p className="hint">
        Requests ingress refused for this key (a wrong Origin, a bad field, the rate limit…),
        identical ones within seconds counted as one row. A request whose key could not be
        identified (an unknown or revoked key, a body too large to read) belongs to no key and is
        not listed. Payloads and keys are never shown.
      </p>
      {error && (
        <p role="alert" className="error">
          {error}
        </p>
      )}
      {!selected ? (
        <p data-testid="refusals-empty">Choose a key above to see its recent refusals.</p>
      ) : rows !== undefined && rows.length === 0 ? (
        <p data-testid="refusals-empty">No refusals of this key recently.</p>
      ) : (
        <div className="table-wrap">
          <table className="stack-narrow">
            <caption className="sr-only">Recent refusals</caption>
            <thead>
              <tr>
                <th scope="col">Last time</th>
                <th scope="col">Code</th>
                <th scope="col">Field</th>
                <th scope="col">Origin</th>
                <th scope="col">Route</th>
                <th scope="col">Count</th>
              </tr>
            </thead>
            <tbody>
              {(rows ?? []).map((r) => (
                <tr
                  key={`${r.last_at}|${r.code}|${r.field}|${r.origin}|${r.route}`}
                  data-testid="refusal-row"
                >
                  <td data-label="Last time">{when(r.last_at)}</td>
                  <td data-label="Code">
                    {r.status} <code>{r.code}</code>
                  </td>
                  <td data-label="Field">{r.field ?? '—'}</td>
                  <td data-label="Origin">{r.origin ?? '—'}</td>
                  <td data-label="Route">
                    <code>{r.route}</code>
                  </td>
                  <td data-label="Count">{r.count}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </div>
  );
}
