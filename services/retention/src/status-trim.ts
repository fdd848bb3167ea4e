import type { Logger } from '@herald/kit';
import { HeraldError } from '@herald/proto';
import { InboxClient, StatusClient } from '@herald/status-client';
import type { NatsConnection } from 'nats';

/** How long the status service may take to trim, ms (a large first trim deletes in chunks). */
const TRIM_TIMEOUT_MS = 120_000;

/**
 * Asks the status service to trim its rows older than its window (STATUS_RETENTION_DAYS), as part
 * of the weekly run. Never fails the run: without a status service there is nothing to trim.
 */
export async function requestStatusTrim(nc: NatsConnection, logger: Logger): Promise<void> {
  try {
    const trimmed = await new StatusClient(nc).trim(TRIM_TIMEOUT_MS);
    logger.info({ ...trimmed }, 'status rows trimmed');
  } catch (err) {
    logger.warn(notDone(err), 'status trim not done');
  }
}

/**
 * Asks the inbox store (the status service) to remove the inbox events past their expiry that a
 * socket had (never one not yet delivered), as part of the weekly run. Never fails the run.
 */
export async function requestInboxExpire(nc: NatsConnection, logger: Logger): Promise<void> {
  try {
    const expired = await new InboxClient(nc).expire(TRIM_TIMEOUT_MS);
    logger.info({ removed: expired.removed }, 'expired inbox events removed');
  } catch (err) {
    logger.warn(notDone(err), 'inbox expiry not done');
  }
}

/** What the log says of a request not done: the code, and why (no answer, or the refusal). */
function notDone(err: unknown): { code?: string; err: string } {
  if (!(err instanceof HeraldError)) return { err: String(err) };
  return { code: err.code, err: String(err.cause ?? err.message) };
}
