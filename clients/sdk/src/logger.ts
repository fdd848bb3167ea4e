/**
 * Where the SDK reports what it does. `console` fits as is; wrap pino or similar as
 * `{ warn: (msg, ctx) => log.warn(ctx, msg) }`. Messages never carry the API key or payloads.
 */
export interface Logger {
  debug?(message: string, context?: Record<string, unknown>): void;
  warn?(message: string, context?: Record<string, unknown>): void;
  error?(message: string, context?: Record<string, unknown>): void;
}

/** Errors thrown by the app's own listeners: to the logger, else where the runtime reports them. */
export function reportListenerError(logger: Logger | undefined, err: unknown): void {
  const g = globalThis as { reportError?: (e: unknown) => void };
  if (logger?.error) logger.error('herald: a listener threw', { error: err });
  else if (typeof g.reportError === 'function') g.reportError(err);
  else console.error('herald: a listener threw', err);
}
