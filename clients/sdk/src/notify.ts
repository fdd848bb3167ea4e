import { DispatchStatus, isUuidV4 } from '@herald/proto/wire';
import { HeraldError } from './errors.js';
import { errorDetail } from './frames.js';
import { checkClient, type Resolved } from './options.js';
import type { NotifyInput, NotifyResult } from './types.js';

/**
 * POSTs one event to `{baseUrl}/notify`. Server outcomes, network errors and timeouts resolve to a
 * result; only a call that could never succeed (bad recipient, missing payload) rejects.
 */
export async function notify(options: Resolved, input: NotifyInput): Promise<NotifyResult> {
  const body = notifyBody(options, input);
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
    const res = await fetchFn(`${options.baseUrl}/notify`, {
      method: 'POST',
      headers,
      body,
      signal: controller.signal,
    });
    const text = await res.text();
    return notifyResult(res.status, text, res.headers.get('retry-after'));
  } catch (err) {
    const timedOut = controller.signal.aborted;
    return failed(
      0,
      timedOut
        ? new HeraldError(
            'timeout',
            `No answer from Herald within ${options.notifyTimeoutMs} ms (options.notifyTimeoutMs)`,
          )
        : new HeraldError(
            'network_error',
            `Could not reach Herald at ${options.baseUrl}: ${String(err)}`,
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
  const { recipient, payload, origin, idempotencyKey } = input;
  if (!isUuidV4(recipient)) {
    throw new TypeError(
      'Herald: notify recipient must be a UUID v4 (xxxxxxxx-xxxx-4xxx-yxxx-xxxxxxxxxxxx, y in 8,9,a,b)',
    );
  }
  const client = input.client ?? options.client;
  checkClient(client, 'notify client');
  for (const [name, value] of [
    ['origin', origin],
    ['idempotencyKey', idempotencyKey],
  ] as const) {
    if (value !== undefined && (typeof value !== 'string' || value === '')) {
      throw new TypeError(`Herald: notify ${name} must be a non-empty string, or left out`);
    }
  }
  let payloadJson: string | undefined;
  try {
    payloadJson = JSON.stringify(payload);
  } catch (err) {
    throw new TypeError(`Herald: notify payload must be JSON-serialisable: ${String(err)}`);
  }
  if (payloadJson === undefined) {
    throw new TypeError(
      'Herald: notify payload is required: any JSON value (object, array, string, number, ...)',
    );
  }
  return `{"recipient":${JSON.stringify(recipient)},"payload":${payloadJson},"api_key":${JSON.stringify(options.apiKey)},"client":${JSON.stringify(client)}}`;
}

/** Maps an answer of `POST /notify` (status, body text, Retry-After) to a result. */
export function notifyResult(
  httpStatus: number,
  text: string,
  retryAfter: string | null,
): NotifyResult {
  let body: { status?: unknown; id?: unknown; error?: unknown } | undefined;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
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

function failed(httpStatus: number, error: HeraldError): NotifyResult {
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
