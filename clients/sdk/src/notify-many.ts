import { HeraldError } from './errors.js';
import { checkHeaders, eventMembers, failed, postJson, resultOfBody } from './notify.js';
import { checkClient, type Resolved } from './options.js';
import type { NotifyEvent, NotifyManyOptions, NotifyResult } from './types.js';

/**
 * POSTs events in one request to `{baseUrl}/notify/batch`, resolving to one result per event in
 * order, with the same statuses as `notify`. A refusal of the whole request (bad key, over the
 * server's batch limits, network error, timeout) becomes every event's failed result; only a call
 * that could never succeed (bad recipient, missing payload, no events) rejects.
 */
export async function notifyMany(
  options: Resolved,
  events: readonly NotifyEvent[],
  opts: NotifyManyOptions = {},
): Promise<NotifyResult[]> {
  if (!Array.isArray(events) || events.length === 0) {
    throw new TypeError('Herald: notifyMany needs a non-empty array of { recipient, payload }');
  }
  const client = opts.client ?? options.client;
  checkClient(client, 'notifyMany client');
  checkHeaders(opts, 'notifyMany');
  const members = events.map((event) => {
    if (typeof event !== 'object' || event === null) {
      throw new TypeError('Herald: notifyMany events must each be { recipient, payload }');
    }
    return `{${eventMembers(event, 'notifyMany')}}`;
  });
  const body = `{"api_key":${JSON.stringify(options.apiKey)},"client":${JSON.stringify(client)},"events":[${members.join(',')}]}`;
  const answer = await postJson(options, '/notify/batch', body, opts);
  if ('error' in answer) return events.map(() => answer);
  let parsed: unknown;
  try {
    parsed = JSON.parse(answer.text);
  } catch {
    parsed = undefined;
  }
  const results = (parsed as { results?: unknown } | undefined)?.results;
  if (answer.httpStatus === 200 && Array.isArray(results) && results.length === events.length) {
    return results.map((slot: unknown) => {
      const status = (slot as { http_status?: unknown } | null)?.http_status;
      return resultOfBody(typeof status === 'number' ? status : 0, slot, null);
    });
  }
  const whole =
    answer.httpStatus === 200
      ? failed(
          200,
          new HeraldError(
            'unexpected_response',
            "Herald answered HTTP 200 with a body that is not a batch's results",
            { httpStatus: 200 },
          ),
        )
      : resultOfBody(answer.httpStatus, parsed, answer.retryAfter);
  return events.map(() => whole);
}
