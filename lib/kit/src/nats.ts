import { readFileSync } from 'node:fs';
import { type ConnectionOptions, connect, type NatsConnection } from 'nats';
import { type CommonEnv, withoutCredentials } from './config.js';
import type { Logger } from './logger.js';
import { installNatsReaderGuard } from './nats-reader-guard.js';

/** Connects to NATS with the service's name, TLS and credentials from config, reconnecting forever. */
export async function connectNats(
  config: CommonEnv,
  name: string,
  logger: Logger,
): Promise<NatsConnection> {
  installNatsReaderGuard();
  const opts: ConnectionOptions = {
    servers: config.NATS_URL.split(','),
    name,
    maxReconnectAttempts: -1,
    reconnectTimeWait: 500,
    pingInterval: config.NATS_PING_INTERVAL_MS ?? 10_000,
    // Each attempt on a node, reconnects included: one cut off the network costs this, not 20 s.
    timeout: config.NATS_CONNECT_TIMEOUT_MS ?? 20_000,
    // nats.js otherwise builds an Error per request() to append the caller's stack to a failure;
    // every offline dispatch fails its live request ("no responders"), so formatting those stacks
    // was paid per offline event (docs/architecture-history.md, "Figures behind code comments").
    noAsyncTraces: true,
    ...(config.NATS_USER ? { user: config.NATS_USER, pass: config.NATS_PASSWORD ?? '' } : {}),
  };
  if (config.NATS_CA_FILE || config.NATS_CERT_FILE) {
    opts.tls = {
      ...(config.NATS_CA_FILE ? { ca: readFileSync(config.NATS_CA_FILE, 'utf8') } : {}),
      ...(config.NATS_CERT_FILE ? { cert: readFileSync(config.NATS_CERT_FILE, 'utf8') } : {}),
      ...(config.NATS_KEY_FILE ? { key: readFileSync(config.NATS_KEY_FILE, 'utf8') } : {}),
    };
  }
  const urls = config.NATS_URL.split(',');
  // A URL carries a password exactly when hiding it changes the URL.
  const credentials =
    Boolean(config.NATS_PASSWORD) || urls.some((url) => withoutCredentials(url) !== url);
  const tlsAsked = Boolean(opts.tls) || urls.some((url) => /^tls:\/\//i.test(url));
  if (credentials && !tlsAsked)
    logger.warn(
      'NATS credentials travel in clear text: serve NATS over TLS and set NATS_CA_FILE (or use tls:// URLs)',
    );
  const nc = await connect(opts).catch((err: unknown) => {
    throw new Error(connectFailure(config, err));
  });
  logger.info({ server: nc.getServer() }, 'connected to NATS');
  void (async () => {
    for await (const s of nc.status()) {
      if (s.type === 'disconnect' || s.type === 'reconnect' || s.type === 'error') {
        logger.warn({ type: s.type, data: String(s.data) }, 'NATS connection status');
      }
    }
  })();
  return nc;
}

/**
 * Why the first connect failed, naming NATS_URL (its passwords hidden) and what to change: nats.js
 * alone says `CONNECTION_REFUSED`, `Authorization Violation` or `tls`.
 */
function connectFailure(config: CommonEnv, err: unknown): string {
  const url = config.NATS_URL.split(',').map(withoutCredentials).join(',');
  const code = String((err as { code?: unknown }).code ?? '');
  const text = err instanceof Error ? err.message : String(err);
  const fix =
    code === 'CONNECTION_REFUSED' || /ECONNREFUSED/.test(text)
      ? 'nothing accepts connections there: start nats-server, or point NATS_URL at it'
      : /ENOTFOUND|EAI_AGAIN/.test(text)
        ? 'its host name does not resolve: fix NATS_URL'
        : /authoriz|authenticat/i.test(`${code} ${text}`)
          ? 'nats-server refused the credentials: check NATS_USER and NATS_PASSWORD (or the user:password in NATS_URL)'
          : /tls|ssl|certificate/i.test(`${code} ${text}`)
            ? "TLS failed: if nats-server serves TLS, set NATS_CA_FILE to the CA that signed its certificate (and NATS_CERT_FILE/NATS_KEY_FILE if it asks for one); if it does not, don't give it a tls:// URL or TLS files"
            : 'check that nats-server runs at NATS_URL and accepts this service';
  return `NATS_URL (${url}): cannot connect (${code || text}): ${fix}`;
}

/**
 * False once the connection is closed or draining. Not a readiness check on its own: a connection
 * that is reconnecting passes; /readyz uses `natsAnswers` (nats-readiness.ts).
 */
export function natsReady(nc: NatsConnection): boolean {
  return !nc.isClosed() && !nc.isDraining();
}
