import type { Logger } from '@herald/kit';
import { NatsRequester, replyJson } from '@herald/nats';
import { StatusTrimReply, subjects } from '@herald/proto';
import type { NatsConnection } from 'nats';

/** How long the status service may take to trim, ms (a large first trim deletes in chunks). */
const TRIM_TIMEOUT_MS = 120_000;

/**
 * Asks the status service to trim its rows older than its window (STATUS_RETENTION_DAYS), as part
 * of the weekly run. Never fails the run: without a status service there is nothing to trim.
 */
export async function requestStatusTrim(nc: NatsConnection, logger: Logger): Promise<void> {
  const outcome = await new NatsRequester(nc).request(
    subjects.statusTrim,
    new TextEncoder().encode(JSON.stringify({ v: 1 })),
    undefined,
    TRIM_TIMEOUT_MS,
  );
  if (outcome.kind !== 'reply') {
    logger.warn({ outcome: outcome.kind }, 'status trim not done: no status service answered');
    return;
  }
  const reply = StatusTrimReply.safeParse(replyJson(outcome.msg));
  if (reply.success && reply.data.ok) logger.info({ ...reply.data }, 'status rows trimmed');
  else logger.warn({ error: reply.success ? reply.data.error : 'bad reply' }, 'status trim failed');
}
