import { randomUUID } from 'node:crypto';
import { HeraldError } from '@herald/proto';
import { ZodError } from 'zod';

export interface ErrorMappingOptions {
  /** Called once for an error that is not the caller's: log it under the request id. */
  onInternal(requestId: string, err: unknown): void;
  /** The safe message a caller gets for it, quoting the request id. */
  internalMessage(requestId: string): string;
}

/**
 * The one mapping every transport's error boundary uses (ingress's HTTP app and NATS responder,
 * auth's account API): a HeraldError keeps its code, status, field and safe message; a stray
 * ZodError is an `invalid_field` naming its field; anything else is `internal`, its details
 * logged under a request id and never shown to the caller.
 */
export function toHeraldError(err: unknown, opts: ErrorMappingOptions): HeraldError {
  if (err instanceof HeraldError) return err;
  if (err instanceof ZodError) {
    const issue = err.issues[0];
    const field = issue?.path.map(String).join('.') || 'body';
    return new HeraldError('invalid_field', issue?.message ?? `${field} is invalid`, { field });
  }
  const requestId = randomUUID();
  opts.onInternal(requestId, err);
  return new HeraldError('internal', opts.internalMessage(requestId));
}
