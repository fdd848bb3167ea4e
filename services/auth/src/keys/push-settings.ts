import {
  HeraldError,
  type KeyPush,
  type KeyScope,
  PUSH_AFTER_MS_MAX,
  PUSH_BODY_MAX,
  PUSH_TITLE_MAX,
  PUSH_TTL_S_DEFAULT,
  PUSH_TTL_S_MAX,
} from '@herald/proto';
import { z } from 'zod';

/**
 * A key's push settings (issue 40): the fields `key create` and the account API take, one zod
 * schema each with proto/push.ts's bounds and a message naming the field, so the CLI (which maps
 * `push_after_ms` to `--push-after-ms`) and the account API refuse the same values the same way.
 */
export const PushKeyFields = {
  push_after_ms: z
    .number({
      error: `push_after_ms must be a whole number of milliseconds from 0 to ${PUSH_AFTER_MS_MAX}: how long an event may stay unproven by a socket before it is pushed`,
    })
    .int(`push_after_ms must be a whole number of milliseconds from 0 to ${PUSH_AFTER_MS_MAX}`)
    .min(0, 'push_after_ms must be at least 0 (push at once when no socket proved the event)')
    .max(PUSH_AFTER_MS_MAX, `push_after_ms must be at most ${PUSH_AFTER_MS_MAX} (1 hour)`),
  push_ttl_s: z
    .number({
      error: `push_ttl_s must be a whole number of seconds from 1 to ${PUSH_TTL_S_MAX}: how long the push service keeps a push for an offline device (default ${PUSH_TTL_S_DEFAULT}, 1 day)`,
    })
    .int(`push_ttl_s must be a whole number of seconds from 1 to ${PUSH_TTL_S_MAX}`)
    .min(1, 'push_ttl_s must be at least 1 second')
    .max(PUSH_TTL_S_MAX, `push_ttl_s must be at most ${PUSH_TTL_S_MAX} (28 days)`),
  push_title: z
    .string({
      error: "push_title must be a string: the notification's title when the event names none",
    })
    .min(1, 'push_title must not be empty: leave it out for the default title')
    .max(PUSH_TITLE_MAX, `push_title must be at most ${PUSH_TITLE_MAX} characters`),
  push_body: z
    .string({
      error: "push_body must be a string: the notification's text when the event gives none",
    })
    .max(PUSH_BODY_MAX, `push_body must be at most ${PUSH_BODY_MAX} characters`),
  push_include_payload: z.boolean({
    error:
      "push_include_payload must be true or false: true lets FCM and APNs pushes carry the event's payload (Web Push carries it anyway, encrypted end to end)",
  }),
};

/** What a caller asks for: every field optional; the others need `push_after_ms`. */
export interface PushRequestFields {
  push_after_ms?: number | undefined;
  push_ttl_s?: number | undefined;
  push_title?: string | undefined;
  push_body?: string | undefined;
  push_include_payload?: boolean | undefined;
}

/** The columns a key's push settings are stored in: all null for a key that never pushes. */
export interface PushColumns {
  push_after_ms: number | null;
  push_ttl_s: number | null;
  push_title: string | null;
  push_body: string | null;
  push_include_payload: boolean | null;
}

const NO_PUSH: PushColumns = {
  push_after_ms: null,
  push_ttl_s: null,
  push_title: null,
  push_body: null,
  push_include_payload: null,
};

/** The settings that only mean something with a delay. */
const NEEDS_AFTER = ['push_ttl_s', 'push_title', 'push_body', 'push_include_payload'] as const;

/**
 * Checks a key's push settings and resolves the columns: absent `push_after_ms` is a key that never
 * pushes, and then any other push setting is refused (it would silently do nothing); a subscribe
 * key sends no events, so it has nothing to push. The TTL defaults to PUSH_TTL_S_DEFAULT. Throws a
 * HeraldError naming the field at fault.
 */
export function resolveKeyPush(request: PushRequestFields, scope: KeyScope): PushColumns {
  if (request.push_after_ms === undefined) {
    const stray = NEEDS_AFTER.find((f) => request[f] !== undefined);
    if (stray) {
      throw new HeraldError(
        'invalid_field',
        `${stray} only applies to a key that pushes: give push_after_ms too (0 to ${PUSH_AFTER_MS_MAX} ms), or leave ${stray} out`,
        { field: stray },
      );
    }
    return NO_PUSH;
  }
  if (scope === 'subscribe') {
    throw new HeraldError(
      'invalid_field',
      'push_after_ms is for keys that send events (scope dispatch or both): a subscribe key sends nothing, so nothing of it is pushed; leave it out, or give the sending key the flag',
      { field: 'push_after_ms' },
    );
  }
  return {
    push_after_ms: check('push_after_ms', request.push_after_ms),
    push_ttl_s: check('push_ttl_s', request.push_ttl_s ?? PUSH_TTL_S_DEFAULT),
    push_title: request.push_title === undefined ? null : check('push_title', request.push_title),
    push_body: request.push_body === undefined ? null : check('push_body', request.push_body),
    push_include_payload:
      request.push_include_payload === undefined
        ? false
        : check('push_include_payload', request.push_include_payload),
  };
}

function check<F extends keyof typeof PushKeyFields>(
  field: F,
  value: unknown,
): z.infer<(typeof PushKeyFields)[F]> {
  const parsed = PushKeyFields[field].safeParse(value);
  if (!parsed.success) {
    throw new HeraldError(
      'invalid_field',
      parsed.error.issues[0]?.message ?? `${field} is invalid`,
      {
        field,
      },
    );
  }
  return parsed.data as z.infer<(typeof PushKeyFields)[F]>;
}

/**
 * The key's settings as the verify reply carries them (proto KeyPush): undefined for a key that
 * never pushes; a template's title and body only where the key has them.
 */
export function keyPushOf(row: PushColumns): KeyPush | undefined {
  if (row.push_after_ms === null) return undefined;
  return {
    after_ms: row.push_after_ms,
    ttl_s: row.push_ttl_s ?? PUSH_TTL_S_DEFAULT,
    ...(row.push_title === null ? {} : { title: row.push_title }),
    ...(row.push_body === null ? {} : { body: row.push_body }),
    include_payload: row.push_include_payload ?? false,
  };
}

/** The settings as key views show them: every field present (null where the key has none), or null. */
export function pushView(row: PushColumns) {
  const push = keyPushOf(row);
  if (!push) return null;
  return {
    after_ms: push.after_ms,
    ttl_s: push.ttl_s,
    title: push.title ?? null,
    body: push.body ?? null,
    include_payload: push.include_payload ?? false,
  };
}
