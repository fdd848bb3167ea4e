import { DispatchStatus, isUuidV4 } from '@herald/proto/wire';
import { HeraldError } from './errors.js';
import { errorDetail } from './frames.js';
import { explainNetworkFailure } from './network-cause.js';
import { checkClient, type Resolved } from './options.js';
import type { NotifyFailed, NotifyInput, NotifyResult } from './types.js';

/**
 * POSTs one event to `{baseUrl}/notify`. Server outcomes, network errors and timeouts resolve to a
 * result; only a call that could never succeed (bad recipient, missing payload) rejects.
 */
export async function notify(options: Resolved, input: NotifyInput): Promise<NotifyResult> {
  const body = notifyBody(options, input);
  const answer = await postJson(options, '/notify', body, input);
  if ('error' in answer) return answer;
  return notifyResult(answer.httpStatus, answer.text, answer.retryAfter);
}

/** What a POST answered, or the failed result of one that got no answer. */
export type Posted = { httpStatus: number; text: string; retryAfter: string | null } | NotifyFailed;

/** POSTs a JSON body to `{baseUrl}{path}` within `notifyTimeoutMs`. */
export async function postJson(
  options: Resolved,
  path: string,
  body: string,
  input: { origin?: string | undefined; idempotencyKey?: string | undefined },
): Promise<Posted> {
  const fetchFn = options.fetch ?? globalThis.fetch;
  if (typeof fetchFn !== 'function') {
    throw new TypeError('Herald: this runtime has no global fetch: pass options.fetch');
  }
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (input.idempotencyKey !== undefined) headers['idempotency-key'] = input.idempotencyKey;
  if (input.origin !== undefined) headers.origin = input.origin;
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), options.notifyTimeoutMs);
  try {
    const res = await fetchFn(`${options.baseUrl}${path}`, {
      method: 'POST',
      headers,
      body,
      signal: controller.signal,
    });
    const text = await res.text();
    return { httpStatus: res.status, text, retryAfter: res.headers.get('retry-after') };
  } catch (err) {
    clearTimeout(timer);
    if (controller.signal.aborted) {
      return failed(
        0,
        new HeraldError(
          'timeout',
          `No answer from Herald within ${options.notifyTimeoutMs} ms (options.notifyTimeoutMs)`,
        ),
      );
    }
    // Node's `fetch failed` hides the reason (an untrusted certificate, say) in its cause.
    const why = await explainNetworkFailure(options.baseUrl, err, fetchFn);
    return failed(
      0,
      new HeraldError(
        'network_error',
        `Could not reach Herald at ${options.baseUrl}: ${why ?? String(err)}`,
        { cause: err },
      ),
    );
  } finally {
    clearTimeout(timer);
  }
}

/** The JSON body, after the checks a server would fail anyway (they reject with a TypeError). */
function notifyBody(options: Resolved, input: NotifyInput): string {
  if (typeof input !== 'object' || input === null) {
    throw new TypeError('Herald: notify needs { recipient, payload }');
  }
  const client = input.client ?? options.client;
  checkClient(client, 'notify client');
  checkHeaders(input, 'notify');
  return `{${eventMembers(input, 'notify')},"api_key":${JSON.stringify(options.apiKey)},"client":${JSON.stringify(client)}}`;
}

/** Checks the optional header fields of a call. */
export function checkHeaders(
  input: { origin?: unknown; idempotencyKey?: unknown },
  call: string,
): void {
  for (const [name, value] of [
    ['origin', input.origin],
    ['idempotencyKey', input.idempotencyKey],
  ] as const) {
    if (value !== undefined && (typeof value !== 'string' || value === '')) {
      throw new TypeError(`Herald: ${call} ${name} must be a non-empty string, or left out`);
    }
  }
}

/** `"recipient":...,"payload":...` of one event, after the checks a server would fail anyway. */
export function eventMembers(
  event: { recipient: unknown; payload: unknown },
  call: string,
): string {
  if (!isUuidV4(event.recipient)) {
    throw new TypeError(
      `Herald: ${call} recipient must be a UUID v4 (xxxxxxxx-xxxx-4xxx-yxxx-xxxxxxxxxxxx, y in 8,9,a,b)`,
    );
  }
  let payloadJson: string | undefined;
  try {
    payloadJson = JSON.stringify(event.payload);
  } catch (err) {
    throw new TypeError(`Herald: ${call} payload must be JSON-serialisable: ${String(err)}`);
  }
  if (payloadJson === undefined) {
    throw new TypeError(
      `Herald: ${call} payload is required: any JSON value (object, array, string, number, ...)`,
    );
  }
  return `"recipient":${JSON.stringify(event.recipient)},"payload":${payloadJson}`;
}

/** Maps an answer of `POST /notify` (status, body text, Retry-After) to a result. */
export function notifyResult(
  httpStatus: number,
  text: string,
  retryAfter: string | null,
): NotifyResult {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  return resultOfBody(httpStatus, body, retryAfter);
}

/** Maps one answer's status and parsed body (a single dispatch's, or one slot of a batch's). */
export function resultOfBody(
  httpStatus: number,
  parsed: unknown,
  retryAfter: string | null,
): NotifyResult {
  const body = (typeof parsed === 'object' && parsed !== null ? parsed : undefined) as
    | { status?: unknown; id?: unknown; error?: unknown }
    | undefined;
  if (
    (httpStatus === 200 || httpStatus === 202) &&
    (body?.status === DispatchStatus.sent || body?.status === DispatchStatus.queued) &&
    typeof body.id === 'string'
  ) {
    return { status: body.status, id: body.id, httpStatus };
  }
  const detail = errorDetail(body?.error);
  if (!detail) {
    return failed(
      httpStatus,
      new HeraldError(
        'unexpected_response',
        `Herald answered HTTP ${httpStatus} with a body that is not Herald's`,
        {
          httpStatus,
        },
      ),
    );
  }
  return failed(
    httpStatus,
    new HeraldError(detail.code, detail.message, {
      field: detail.field,
      httpStatus,
      retryAfter: parseRetryAfter(retryAfter),
    }),
  );
}

export function failed(httpStatus: number, error: HeraldError): NotifyFailed {
  return { status: DispatchStatus.failed, httpStatus, error };
}

/** Retry-After is seconds or an HTTP date; either way, seconds from now. */
function parseRetryAfter(value: string | null): number | undefined {
  if (value === null || value.trim() === '') return undefined;
  const seconds = Number(value);
  if (Number.isFinite(seconds)) return Math.max(0, Math.ceil(seconds));
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, Math.ceil((at - Date.now()) / 1000));
}
