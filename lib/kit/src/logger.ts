import { type DestinationStream, type Logger, pino } from 'pino';

export type { Logger } from 'pino';

/**
 * Paths never written to logs: keys, payloads, credentials, recipient tokens, signing secrets. pino censors them wherever a caller
 * passes such an object by mistake.
 */
const REDACT = [
  'api_key',
  '*.api_key',
  'payload',
  '*.payload',
  'key',
  '*.key',
  'password',
  '*.password',
  'token',
  '*.token',
  'signing_secret',
  '*.signing_secret',
  'signing_secrets',
  '*.signing_secrets',
  'req.headers.cookie',
  'req.headers.authorization',
  'req.url',
  'url',
];

/** Logs JSON lines to stdout, or to `destination` (e.g. `pino.destination(2)` for a CLI whose stdout is its output). */
export function createLogger(
  service: string,
  level = 'info',
  destination?: DestinationStream,
): Logger {
  return pino(
    {
      name: service,
      level,
      redact: { paths: REDACT, censor: '[redacted]' },
      base: { service },
    },
    destination,
  );
}

/** Strips the query string, where a socket's api_key travels, from a URL before logging it. */
export function safePath(url: string | undefined): string {
  if (!url) return '';
  const q = url.indexOf('?');
  return q === -1 ? url : url.slice(0, q);
}
