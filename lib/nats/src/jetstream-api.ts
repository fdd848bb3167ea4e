import { noAnswer, replyJson, whyUnanswered } from './json-answer.js';
import type { NatsRequester } from './nats-requester.js';

/**
 * One JetStream API call (`$JS.API.*`) over the NatsRequester, for the calls whose usual answer is
 * a 404 (no such consumer, no message on the subject), which nats.js's own calls turn into a
 * NatsError with a captured stack: the JSON answer, or undefined for a 404. No answer, or any other
 * API error (its description becomes the cause), is HeraldError `unavailable`.
 */
export async function jsApi<T extends object>(
  requester: NatsRequester,
  subject: string,
  body: Uint8Array,
  timeoutMs: number,
): Promise<T | undefined> {
  const outcome = await requester.request(subject, body, undefined, timeoutMs);
  if (outcome.kind !== 'reply') throw noAnswer(subject, whyUnanswered(outcome, timeoutMs));
  const answer = replyJson(outcome.msg) as
    | (T & { error?: { code?: number; description?: string } })
    | undefined;
  if (typeof answer !== 'object' || answer === null) {
    throw noAnswer(subject, 'a reply that is not JSON');
  }
  if (answer.error) {
    if (answer.error.code === 404) return undefined;
    throw noAnswer(subject, `JetStream: ${answer.error.description ?? answer.error.code}`);
  }
  return answer;
}
