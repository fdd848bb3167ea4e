import { PUSH_DEFAULT_TITLE } from '@herald/proto';
import type { PushColumns, PushRequestFields } from '../keys/push-settings.js';
import type { FlagKind, Flags } from './command-types.js';

/** `key create`'s push flags (issue 40); their values are checked with the account API's rules. */
export const PUSH_KEY_FLAGS = {
  'push-after-ms': 'string',
  'push-ttl-s': 'string',
  'push-title': 'string',
  'push-body': 'string',
  'push-include-payload': 'boolean',
} as const satisfies Record<string, FlagKind>;

export const PUSH_KEY_SYNOPSIS =
  "[--push-after-ms N (0-3600000: push its events no socket proved within N ms to the recipient's push subscriptions) [--push-ttl-s S (1-2419200, default 86400)] [--push-title T] [--push-body B] [--push-include-payload (FCM/APNs pushes carry the payload)]]";

/**
 * The push flags as the key request's fields. Numbers are read whole (`--push-after-ms 1.5` or
 * `abc` is NaN, which the field's schema refuses naming it); a negative needs `--push-after-ms=-1`,
 * as the CLI's parser reads `-1` alone as a flag. Bounds, and the other flags without
 * `--push-after-ms`, are checked by resolveKeyPush, naming the flag.
 */
export function pushFlags(flags: Flags<keyof typeof PUSH_KEY_FLAGS>): PushRequestFields {
  return {
    push_after_ms: wholeNumber(flags['push-after-ms']),
    push_ttl_s: wholeNumber(flags['push-ttl-s']),
    push_title: flags['push-title'],
    push_body: flags['push-body'],
    push_include_payload: flags['push-include-payload'] === 'true' || undefined,
  };
}

function wholeNumber(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  return /^-?[0-9]{1,10}$/.test(value) ? Number(value) : Number.NaN;
}

/** `key list`'s column for a push key; nothing for a key that never pushes. */
export function pushListText(k: PushColumns): string[] {
  return k.push_after_ms === null ? [] : [`push after ${k.push_after_ms} ms`];
}

/** `key create`'s lines for a push key: what is pushed when, with which title. */
export function pushCreatedLines(k: PushColumns): string[] {
  if (k.push_after_ms === null) return [];
  const title = k.push_title === null ? `default "${PUSH_DEFAULT_TITLE}"` : `"${k.push_title}"`;
  return [
    `  push:    events no socket proved within ${k.push_after_ms} ms are pushed (TTL ${k.push_ttl_s} s, title ${title}${k.push_body === null ? '' : `, body "${k.push_body}"`}${k.push_include_payload ? ', payload to FCM/APNs too' : ''})`,
  ];
}
