import type { DashboardConfig, PusherApp } from './api.js';
import { CopyButton } from './CopyButton.js';
import { endpoints, SECRET_PLACEHOLDER, snippets } from './pusher.js';

/**
 * An app's snippets with its values filled in: the host and port from the dashboard's own
 * configuration (the socket edge and ingress it already points the debug console at), the
 * secret only while it is on show, else {@link SECRET_PLACEHOLDER}.
 */
export function PusherSnippets({
  app,
  secret,
  config,
}: {
  app: PusherApp;
  secret: string | undefined;
  config: DashboardConfig | undefined;
}) {
  const { ws, http } = endpoints(config);
  const unknown = [
    ...(ws.known ? [] : [`DASHBOARD_WS_URL (replace ${ws.host})`]),
    ...(http.known ? [] : [`DASHBOARD_INGRESS_URL (replace ${http.host})`]),
  ];
  return (
    <section className="card" id="pusher-snippets" aria-labelledby="pusher-snippets-title">
      <h2 id="pusher-snippets-title">
        Snippets for app <code>{app.app_id}</code>
      </h2>
      <p className="hint">
        Sockets connect to{' '}
        <code>
          wss://{`${ws.host}:${ws.port}${ws.path}`}/app/{app.key}
        </code>
        ; the HTTP API is{' '}
        <code>
          https://{`${http.host}:${http.port}`}/apps/{app.app_id}/…
        </code>
        .{' '}
        {secret
          ? 'They carry the secret just shown: keep it out of source control.'
          : `The secret is shown only once: put yours where they say ${SECRET_PLACEHOLDER}.`}
      </p>
      {unknown.length > 0 && (
        <p className="warning">This server does not say where it listens: {unknown.join(', ')}.</p>
      )}
      {snippets({ app, secret, config }).map((s) => (
        <figure key={s.id} className="snippet" aria-labelledby={`snippet-${s.id}`}>
          <figcaption id={`snippet-${s.id}`}>
            <h3>{s.title}</h3>
            <CopyButton value={s.code} label={`Copy ${s.title}`} className="secondary" />
          </figcaption>
          <pre data-testid={`snippet-${s.id}`}>
            <code>{s.code}</code>
          </pre>
        </figure>
      ))}
    </section>
  );
}
