import { jsApi, type NatsRequester, noAnswer } from '@herald/nats';

/**
 * Whether the queue stream `stream` holds any message on `subject`: JetStream's `STREAM.MSG.GET`
 * with `last_by_subj`, whose usual answer on connect, 404 "no message found", {@link jsApi} reads
 * without an Error. Throws HeraldError `unavailable` when JetStream does not answer.
 */
export async function storesAnythingFor(
  requester: NatsRequester,
  stream: string,
  subject: string,
  timeoutMs: number,
): Promise<boolean> {
  const api = `$JS.API.STREAM.MSG.GET.${stream}`;
  const body = Buffer.from(JSON.stringify({ last_by_subj: subject }));
  const answer = await jsApi<{ message?: unknown }>(requester, api, body, timeoutMs);
  if (answer === undefined) return false;
  if (answer.message) return true;
  throw noAnswer(api, 'a reply with no message');
}
