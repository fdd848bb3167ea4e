import {
  HeraldError,
  type KeyPush,
  PUSH_DEFAULT_TITLE,
  PUSH_PAYLOAD_JSON_MAX,
  PUSH_TITLE_MAX,
  PushContent,
  type PushSpec,
} from '@herald/proto';

/**
 * The notify body's optional `"push"` field (issue 40), validated: what the notification shows for
 * this event when the push fallback sends one. Throws 400 `invalid_field` naming the member at
 * fault (`push.title`, `push.url`, ...), or `push` itself for a value that is not an object or a
 * member the field does not have.
 */
export function parsePushContent(value: unknown): PushContent {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new HeraldError(
      'invalid_field',
      'push must be an object {"title", "body"?, "url"?, "icon"?}: what the push notification shows, or leave push out',
      { field: 'push' },
    );
  }
  const parsed = PushContent.safeParse(value);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  if (issue?.code === 'unrecognized_keys') {
    throw new HeraldError(
      'invalid_field',
      `push has no member ${issue.keys.map((k) => JSON.stringify(k)).join(', ')}: it takes title, body, url and icon`,
      { field: 'push' },
    );
  }
  const member = String(issue?.path[0] ?? '');
  const field = member === '' ? 'push' : `push.${member}`;
  // proto's messages name the field already ("push.title must be ..."); a wrong type has zod's.
  const given = (value as Record<string, unknown>)[member];
  const message = issue?.message.startsWith(field)
    ? issue.message
    : given === undefined
      ? `${field} is required: the notification's title, 1 to ${PUSH_TITLE_MAX} characters`
      : `${field} must be a string`;
  throw new HeraldError('invalid_field', message, { field });
}

/**
 * What the `pending` record of a push key carries (proto's PushSpec): the key's delay and TTL; the
 * event's own `push` content, else the key's template (its title and body), else the default
 * title; and the payload's JSON text when it fits one Web Push message (PUSH_PAYLOAD_JSON_MAX).
 */
export function pushSpecOf(
  keyPush: KeyPush,
  content: PushContent | undefined,
  payloadText: string,
): PushSpec {
  const spec: PushSpec = {
    after_ms: keyPush.after_ms,
    ttl_s: keyPush.ttl_s,
    title: content ? content.title : (keyPush.title ?? PUSH_DEFAULT_TITLE),
  };
  const body = content ? content.body : keyPush.body;
  if (body !== undefined) spec.body = body;
  if (content?.url !== undefined) spec.url = content.url;
  if (content?.icon !== undefined) spec.icon = content.icon;
  if (payloadText.length <= PUSH_PAYLOAD_JSON_MAX) spec.payload_json = payloadText;
  // FCM and APNs see what they carry: the payload goes to them only on the key's opt-in.
  if (keyPush.include_payload === true) spec.include_payload = true;
  return spec;
}
