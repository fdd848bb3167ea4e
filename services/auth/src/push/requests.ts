import { ApnsKey, FcmServiceAccount, HeraldError, PUSH_URL_MAX } from '@herald/proto';
import { z } from 'zod';

/** What the status service takes as an id or a recipient (proto/push.ts's PushRequest bounds). */
const ID_MAX = 64;
const RECIPIENT_MAX = 64;

const SUBJECT_HINT =
  'give mailto:you@example.com or an https:// URL of yours: push services contact it about your pushes (VAPID `sub`, RFC 8292)';

/** VAPID's `sub`: a mailto: address or an https: URL, at most PUSH_URL_MAX characters. */
const VapidSubject = z
  .string()
  .max(PUSH_URL_MAX, `must be at most ${PUSH_URL_MAX} characters`)
  .refine((s) => /^mailto:[^\s@]+@[^\s@]+$/.test(s) || isHttpsUrl(s), {
    message: `must be a mailto: address or an https:// URL: ${SUBJECT_HINT}`,
  });

/** A subscription's id as an operation names it: what `push subscriptions` lists. */
const SubscriptionId = z
  .string()
  .min(1, 'must not be empty')
  .max(ID_MAX, `must be at most ${ID_MAX} characters`);

const Recipient = z
  .string()
  .min(1, 'must not be empty')
  .max(RECIPIENT_MAX, `must be at most ${RECIPIENT_MAX} characters`);

/** A VAPID subject, checked; throws naming `field` (`subject` in the API, the flag in the CLI). */
export function parseVapidSubject(value: string, field: string): string {
  return check(VapidSubject, value, field);
}

/** A subscription id, checked; throws naming `id`. */
export function parseSubscriptionId(value: string): string {
  return check(SubscriptionId, value, 'id', ': give an id `push subscriptions` lists');
}

/** A recipient filter, checked; throws naming `recipient`. */
export function parseRecipient(value: string): string {
  return check(Recipient, value, 'recipient', ': the recipient id your app notifies');
}

function check(schema: z.ZodType<string>, value: string, field: string, hint = ''): string {
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  throw new HeraldError(
    'invalid_field',
    `${field} ${parsed.error.issues[0]?.message ?? 'is invalid'}${hint}`,
    { field },
  );
}

function isHttpsUrl(value: string): boolean {
  try {
    return new URL(value).protocol === 'https:';
  } catch {
    return false;
  }
}

/**
 * An FCM service-account JSON file's text, checked (the fields Herald uses; the rest ignored);
 * throws naming `field` (`service_account` in the API, the flag in the CLI).
 */
export function parseFcmServiceAccount(value: unknown, field: string): FcmServiceAccount {
  let json = value;
  if (typeof value === 'string') {
    try {
      json = JSON.parse(value);
    } catch {
      throw new HeraldError(
        'invalid_field',
        `${field} is not JSON: give the service-account key file Firebase's console downloads (Project settings → Service accounts)`,
        { field },
      );
    }
  }
  const picked =
    typeof json === 'object' && json !== null
      ? (({ project_id, client_email, private_key, token_uri }) => ({
          project_id,
          client_email,
          private_key,
          ...(token_uri === undefined ? {} : { token_uri }),
        }))(json as Record<string, unknown>)
      : json;
  const parsed = FcmServiceAccount.safeParse(picked);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  const member = issue?.path.join('.') ?? '';
  throw new HeraldError(
    'invalid_field',
    `${field}: ${issue?.message.startsWith('service_account.') ? issue.message.slice('service_account.'.length) : `${member || 'the file'} ${issue?.message ?? 'is invalid'}`} (a Firebase service-account key file has project_id, client_email and private_key)`,
    { field },
  );
}

/** An APNs key and its ids, checked; throws naming the first wrong field (mapped by `fieldOf`). */
export function parseApnsKey(value: unknown, fieldOf: (member: string) => string): ApnsKey {
  const parsed = ApnsKey.safeParse(value);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  const member = String(issue?.path[0] ?? 'apns');
  const message = issue?.message.startsWith('apns.')
    ? issue.message.slice(`apns.${member} `.length)
    : (issue?.message ?? 'is invalid');
  throw new HeraldError('invalid_field', `${fieldOf(member)} ${message}`, {
    field: fieldOf(member),
  });
}
