import type { Logger } from '@herald/kit';
import { InboxClient, StatusClient } from '@herald/status-client';
import type { NatsConnection } from 'nats';

/** How long the status service may take to trim, ms (a large first trim deletes in chunks). */
const TRIM_TIMEOUT_MS = 120_000;

/**
 * Asks the status service to trim its rows older than its window (STATUS_RETENTION_DAYS), as part
 * of the weekly run. Never fails the run: without a status service there is nothing to trim.
 */
export async function requestStatusTrim(nc: NatsConnection, logger: Logger): Promise<void> {
  const trimmed = await new StatusClient(nc).trim(TRIM_TIMEOUT_MS);
  if (!trimmed.answered) {
    logger.warn({ outcome: trimmed.outcome }, 'status trim not done: no status service answered');
    return;
  }
  const reply = trimmed.reply;
  if (reply?.ok) logger.info({ ...reply }, 'status rows trimmed');
  else logger.warn({ error: reply ? reply.error : 'bad reply' }, 'status trim failed');
}

/**
 * Asks the inbox store (the status service) to remove the inbox events past their expiry that a
 * socket had (never one not yet delivered), as part of the weekly run. Never fails the run.
 */
export async function requestInboxExpire(nc: NatsConnection, logger: Logger): Promise<void> {
  const expired = await new InboxClient(nc).expire(TRIM_TIMEOUT_MS);
  if (!expired.answered) {
    logger.warn('inbox expiry not done: no status service answered');
    return;
  }
  const reply = expired.reply;
  if (reply?.ok) logger.info({ removed: reply.removed }, 'expired inbox events removed');
  else logger.warn({ error: reply ? reply.error : 'bad reply' }, 'inbox expiry failed');
}
