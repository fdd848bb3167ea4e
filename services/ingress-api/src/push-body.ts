import {
  API_KEY_FORMAT,
  type Client,
  DEVICE_FORMAT,
  type DevicePushKind,
  DeviceToken,
  HeraldError,
  invalidApiKey,
  MAX_TOKEN_LENGTH,
  UUID_V4,
  WebPushSubscription,
} from '@herald/proto';

/** Who a push route's caller says it is: what `/ws/connect` takes, checked the same way. */
export interface SubscriberClaim {
  api_key: string;
  /** Lower-cased. */
  recipient: string;
  /** Absent: the key's own client. */
  client: Client | undefined;
  token: string | undefined;
}

/** A `POST /push/subscriptions` body, validated: a browser's subscription or a device token. */
export type SubscribeBody = SubscriberClaim & { device: string | undefined } & (
    | { kind: 'webpush'; subscription: WebPushSubscription }
    | { kind: DevicePushKind; deviceToken: string }
  );

const EXAMPLE =
  '{"api_key", "recipient", "token"?, "device"?, "kind": "webpush", "subscription": {"endpoint", "keys": {"p256dh", "auth"}}} (the browser\'s subscription.toJSON()), or {"api_key", "recipient", "recipient_token"?, "device"?, "kind": "fcm"|"apns", "token": DEVICE_TOKEN}';

/**
 * Reads a subscription body, field by field in a fixed order (api_key, recipient, client, the
 * recipient token, device, kind, subscription or device token), so the same bad body always gets
 * the same error naming its field. `api_key` may come in the query instead, as everywhere else.
 * The recipient token is `recipient_token`, or for `webpush` `token` too (the SDK's field); for
 * `fcm`/`apns` `token` is the device token (docs/architecture.md records the decision).
 */
export function parseSubscribeBody(raw: string, query: URLSearchParams): SubscribeBody {
  let json: unknown;
  try {
    json = JSON.parse(raw);
  } catch {
    throw new HeraldError('invalid_json', `The body is not valid JSON: send ${EXAMPLE}`, {
      field: 'body',
    });
  }
  if (typeof json !== 'object' || json === null || Array.isArray(json)) {
    throw new HeraldError('invalid_json', `The body must be a JSON object: send ${EXAMPLE}`, {
      field: 'body',
    });
  }
  const body = json as Record<string, unknown>;
  const native = body.kind === 'fcm' || body.kind === 'apns';
  const claim = claimOf({
    ...body,
    api_key: body.api_key ?? queryValue(query, 'api_key'),
    token: recipientTokenOf(body, native),
  });
  const device = body.device;
  if (device !== undefined && (typeof device !== 'string' || !DEVICE_FORMAT.test(device))) {
    throw new HeraldError(
      'invalid_field',
      'device must be 1 to 64 characters of A-Z, a-z, 0-9, _ and -, the id /ws/connect gets: or leave it out',
      { field: 'device' },
    );
  }
  const kind = kindOf(body.kind);
  if (kind !== 'webpush') return { ...claim, device, kind, deviceToken: deviceTokenOf(body.token) };
  return { ...claim, device, kind, subscription: subscriptionOf(body.subscription) };
}

/** The recipient token of a subscription body: `recipient_token`, or `token` for Web Push. */
function recipientTokenOf(body: Record<string, unknown>, native: boolean): unknown {
  const given = body.recipient_token;
  if (native) return given;
  if (given !== undefined && body.token !== undefined && given !== body.token) {
    throw new HeraldError(
      'invalid_field',
      'recipient_token and token differ: for kind "webpush" both name the recipient token, so send one of them',
      { field: 'recipient_token' },
    );
  }
  return given ?? body.token;
}

function deviceTokenOf(value: unknown): string {
  if (value === undefined) {
    throw new HeraldError(
      'missing_field',
      'token is required for kind "fcm" and "apns": the device token the app got from FCM or APNs (a recipient token goes in recipient_token)',
      { field: 'token' },
    );
  }
  const parsed = DeviceToken.safeParse(value);
  if (parsed.success) return parsed.data;
  throw new HeraldError(
    'invalid_field',
    typeof value === 'string'
      ? (parsed.error.issues[0]?.message ?? 'token is invalid')
      : 'token must be a string: the device token the app got from FCM or APNs',
    { field: 'token' },
  );
}

/** The subscriber of a `GET`/`DELETE` push route: its query's api_key, recipient, client, token. */
export function parseSubscriberQuery(query: URLSearchParams): SubscriberClaim {
  const value = (name: string) => queryValue(query, name);
  return claimOf({
    api_key: value('api_key'),
    recipient: value('recipient'),
    client: value('client'),
    token: value('token'),
  });
}

/** The query's api_key alone (`GET /push/vapid-public-key`). */
export function parseApiKey(query: URLSearchParams): string {
  return apiKeyOf(queryValue(query, 'api_key'));
}

function claimOf(raw: Record<string, unknown>): SubscriberClaim {
  const api_key = apiKeyOf(raw.api_key);
  const { recipient, client, token } = raw;
  if (recipient === undefined) {
    throw new HeraldError(
      'missing_field',
      'recipient is required: the UUID v4 of the user this subscription receives for',
      { field: 'recipient' },
    );
  }
  if (typeof recipient !== 'string' || !UUID_V4.test(recipient)) {
    throw new HeraldError(
      'invalid_recipient',
      'recipient must be a UUID v4 (xxxxxxxx-xxxx-4xxx-yxxx-xxxxxxxxxxxx, y in 8,9,a,b)',
      { field: 'recipient' },
    );
  }
  if (client !== undefined && client !== 'web' && client !== 'mobile') {
    throw new HeraldError('invalid_client', 'client must be "web" or "mobile", or left out', {
      field: 'client',
    });
  }
  if (
    token !== undefined &&
    (typeof token !== 'string' || token === '' || token.length > MAX_TOKEN_LENGTH)
  ) {
    throw new HeraldError(
      'invalid_token',
      `token must be a JWT of at most ${MAX_TOKEN_LENGTH} characters: send the recipient token your server minted`,
      { field: raw.recipient_token === undefined ? 'token' : 'recipient_token' },
    );
  }
  return { api_key, recipient: recipient.toLowerCase(), client, token };
}

function apiKeyOf(value: unknown): string {
  if (value === undefined) {
    throw new HeraldError(
      'missing_api_key',
      'api_key is required: send your Herald API key in the body or as the api_key query parameter',
      { field: 'api_key' },
    );
  }
  if (typeof value !== 'string' || !API_KEY_FORMAT.test(value)) throw invalidApiKey();
  return value;
}

function kindOf(kind: unknown): 'webpush' | DevicePushKind {
  if (kind === 'webpush' || kind === 'fcm' || kind === 'apns') return kind;
  throw new HeraldError(
    'invalid_field',
    kind === undefined
      ? 'kind is required: "webpush" with the browser\'s subscription, or "fcm"/"apns" with the device token'
      : 'kind must be "webpush", "fcm" or "apns"',
    { field: 'kind' },
  );
}

function subscriptionOf(value: unknown): WebPushSubscription {
  if (value === undefined) {
    throw new HeraldError(
      'missing_field',
      'subscription is required: the browser\'s PushSubscription as subscription.toJSON() gives it ({"endpoint", "keys": {"p256dh", "auth"}})',
      { field: 'subscription' },
    );
  }
  const parsed = WebPushSubscription.safeParse(value);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  const field = ['subscription', ...(issue?.path ?? []).map(String)].join('.');
  // proto's messages name the field already; zod's own (a wrong type) get it in front.
  const message = issue?.message.startsWith(field)
    ? issue.message
    : `${field}: ${issue?.message ?? 'invalid value'}: send the browser's subscription.toJSON()`;
  throw new HeraldError('invalid_field', message, { field });
}

/** One query parameter; given twice it is refused, as /ws/connect refuses it. */
function queryValue(query: URLSearchParams, name: string): string | undefined {
  const all = query.getAll(name);
  if (all.length > 1) {
    if (name === 'api_key') throw invalidApiKey();
    throw new HeraldError('invalid_field', `${name} must be given once`, { field: name });
  }
  return all[0];
}
