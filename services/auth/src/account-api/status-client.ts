import { NatsRequester, replyJson } from '@herald/nats';
import { HeraldError, type StatusQuery, StatusReply, subjects } from '@herald/proto';
import type { NatsConnection } from 'nats';

export type StatusAnswer = Extract<StatusReply, { ok: true }>;

/**
 * Asks the status service (a NATS request). The account is always the session's: the dashboard
 * can never name another account's events.
 */
export function statusClient(nc: NatsConnection, timeoutMs: number) {
  const requester = new NatsRequester(nc);
  return async (query: StatusQuery): Promise<StatusAnswer> => {
    const outcome = await requester.request(
      subjects.statusQuery,
      new TextEncoder().encode(JSON.stringify(query)),
      undefined,
      timeoutMs,
    );
    const reply =
      outcome.kind === 'reply' ? StatusReply.safeParse(replyJson(outcome.msg)) : undefined;
    if (!reply?.success || !reply.data.ok) {
      throw new HeraldError(
        'unavailable',
        'The status service did not answer: delivery figures are unavailable for now, retry shortly',
        { retryAfter: 1 },
      );
    }
    return reply.data;
  };
}
