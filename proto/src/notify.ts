import { z } from 'zod';
import { API_KEY_FORMAT } from './api-key.js';
import { HeraldError } from './errors.js';
import { UUID_V4 } from './uuid.js';
import { DispatchStatus } from './wire.js';

export const Client = z.enum(['web', 'mobile']);
export type Client = z.infer<typeof Client>;

/**
 * The body of `POST /notify`, `POST /bff_v001/notify` and a `rt.dispatch.<account>` request.
 * `payload` is any JSON value; ingress forwards its original text, untouched, so large numbers
 * and key order survive.
 */
export const NotifyRequest = z.object({
  recipient: z
    .string({ error: 'recipient must be a string holding a UUID v4' })
    .regex(
      UUID_V4,
      'recipient must be a UUID v4 (xxxxxxxx-xxxx-4xxx-yxxx-xxxxxxxxxxxx, y in 8,9,a,b)',
    )
    .transform((s) => s.toLowerCase()),
  payload: z.unknown(),
  api_key: z.string().regex(API_KEY_FORMAT),
  client: Client,
});
export type NotifyRequest = z.infer<typeof NotifyRequest>;

/**
 * The one refusal for an api_key that cannot be a key (a number, an array, null, an empty or
 * malformed string): the same 401 an unknown key gets, on every transport, so a caller learns
 * nothing from the difference and the check needs no lookup.
 */
export function invalidApiKey(): HeraldError {
  return new HeraldError(
    'invalid_api_key',
    'api_key is not a valid Herald API key: send the hk_live_... or hk_test_... string your dashboard showed when the key was created',
    { field: 'api_key' },
  );
}

const REQUIRED = ['recipient', 'payload', 'api_key', 'client'] as const;

/**
 * Validates a parsed notify body and returns it, or throws the {@link HeraldError} that names the
 * field at fault and says how to fix it. Fields are checked in a fixed order so the same bad body
 * always yields the same error.
 */
export function parseNotifyRequest(body: unknown): NotifyRequest {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new HeraldError(
      'invalid_json',
      'The body must be a JSON object with recipient, payload, api_key and client',
    );
  }
  const record = body as Record<string, unknown>;
  for (const field of REQUIRED) {
    if (record[field] === undefined) {
      const code = field === 'api_key' ? 'missing_api_key' : 'missing_field';
      throw new HeraldError(code, `${field} is required: ${hintFor(field)}`, { field });
    }
  }
  // The shape every valid request has, checked without zod (every dispatch passes here): the same
  // tests as NotifyRequest, and the same result. Anything else goes through zod, which names the
  // field at fault.
  const { recipient, api_key, client } = record;
  if (
    typeof recipient === 'string' &&
    UUID_V4.test(recipient) &&
    typeof api_key === 'string' &&
    API_KEY_FORMAT.test(api_key) &&
    (client === 'web' || client === 'mobile')
  ) {
    return { recipient: recipient.toLowerCase(), payload: record.payload, api_key, client };
  }
  const parsed = NotifyRequest.safeParse(body);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  const field = String(issue?.path[0] ?? 'body');
  if (field === 'recipient') {
    throw new HeraldError(
      'invalid_recipient',
      `recipient must be a UUID v4 (xxxxxxxx-xxxx-4xxx-yxxx-xxxxxxxxxxxx, y in 8,9,a,b)`,
      { field },
    );
  }
  if (field === 'client') {
    throw new HeraldError('invalid_client', `client must be "web" or "mobile"`, { field });
  }
  if (field === 'api_key') throw invalidApiKey();
  throw new HeraldError('invalid_field', `${field}: ${issue?.message ?? 'invalid value'}`, {
    field,
  });
}

function hintFor(field: (typeof REQUIRED)[number]): string {
  switch (field) {
    case 'recipient':
      return 'the UUID v4 of the user to notify';
    case 'payload':
      return 'any JSON value to deliver to the recipient';
    case 'api_key':
      return 'put your Herald API key in the JSON body (never in a header)';
    case 'client':
      return 'either "web" or "mobile", matching your key';
  }
}

/** Success bodies of a dispatch. */
export const NotifyAccepted = z.object({
  status: z.enum([DispatchStatus.sent, DispatchStatus.queued, DispatchStatus.accepted]),
  id: z.string(),
  /** A topic event's: how many members its fan-out snapshot holds. */
  members: z.number().int().nonnegative().optional(),
});
export type NotifyAccepted = z.infer<typeof NotifyAccepted>;

export const ErrorDetail = z.object({
  code: z.string(),
  message: z.string(),
  field: z.string().optional(),
});
export type ErrorDetail = z.infer<typeof ErrorDetail>;

/** 503: could neither push nor store. */
export const NotifyFailed = z.object({
  status: z.literal(DispatchStatus.failed),
  error: ErrorDetail,
});
export type NotifyFailed = z.infer<typeof NotifyFailed>;

/** 4xx: the request was refused; nothing was pushed or stored. */
export const NotifyRefused = z.object({ error: ErrorDetail });
export type NotifyRefused = z.infer<typeof NotifyRefused>;

/**
 * The reply to a `rt.dispatch.<account>` request: the HTTP body plus the HTTP status the same
 * call would have had, so a service can branch on one number.
 */
export const DispatchReply = z.union([
  NotifyAccepted.extend({ http_status: z.number().int() }),
  NotifyFailed.extend({ http_status: z.number().int() }),
  NotifyRefused.extend({ http_status: z.number().int() }),
]);
export type DispatchReply = z.infer<typeof DispatchReply>;
