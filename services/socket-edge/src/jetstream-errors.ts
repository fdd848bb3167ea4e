import { NatsError } from 'nats';

/** True for JetStream's 404s: no such consumer, no such stream, no message on that subject. */
export function isNotFound(err: unknown): boolean {
  return err instanceof NatsError && (err.api_error?.code === 404 || err.code === '404');
}
