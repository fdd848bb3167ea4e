import { isNotFound, type NatsRequester, replyJson } from '@herald/nats';

/**
 * Whether the queue stream `stream` holds any message on `subject`: JetStream's `STREAM.MSG.GET` with
 * `last_by_subj`, sent over the NatsRequester because its usual answer on connect, 404 "no message
 * found", costs a NatsError with a captured stack through nats.js, on every connect of a
 * recipient with nothing queued. Throws when JetStream does not answer.
 */
export async function storesAnythingFor(
  requester: NatsRequester,
  stream: string,
  subject: string,
  timeoutMs: number,
): Promise<boolean> {
  const outcome = await requester.request(
    `$JS.API.STREAM.MSG.GET.${stream}`,
    new TextEncoder().encode(JSON.stringify({ last_by_subj: subject })),
    undefined,
    timeoutMs,
  );
  if (outcome.kind !== 'reply') {
    throw new Error(
      `JetStream message lookup: ${outcome.kind === 'error' ? outcome.reason : outcome.kind}`,
    );
  }
  const body = replyJson(outcome.msg) as
    | { message?: unknown; error?: { code?: number; description?: string } }
    | undefined;
  if (body?.message) return true;
  if (isNotFound({ api_error: body?.error })) return false;
  throw new Error(`JetStream message lookup: ${body?.error?.description ?? 'malformed reply'}`);
}
