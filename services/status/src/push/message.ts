import { createHash } from 'node:crypto';
import type { PushMessage, PushSpec } from '@herald/proto';

/** RFC 8291: one aes128gcm record of 4096 bytes leaves this much plaintext. */
export const PLAINTEXT_MAX = 3993;

/**
 * The collapse key of a recipient's pushes: the notification `tag` and RFC 8030's `Topic` (at
 * most 32 base64url characters), so a push not yet shown is replaced by the next, never stacked.
 * A hash, so neither the push service nor the device's tray learns the account or recipient.
 */
export function collapseKey(account: string, recipient: string): string {
  return createHash('sha256')
    .update(`${account}\u0000${recipient}`)
    .digest('base64url')
    .slice(0, 32);
}

/** One event as a push covers it. */
export interface CoveredEvent {
  id: string;
  at: Date;
  spec: PushSpec;
}

/**
 * The message for `events` (any order): the newest's content, every id newest first, the count.
 * When its JSON is over {@link PLAINTEXT_MAX} bytes the payload goes first, then the body, then
 * the oldest ids (`count` still says how many it stands for): the app fetches the rest by id.
 */
export function buildMessage(events: readonly CoveredEvent[], tag: string): PushMessage {
  const sorted = [...events].sort(
    (a, b) => b.at.getTime() - a.at.getTime() || (a.id < b.id ? 1 : -1),
  );
  const newest = sorted[0];
  if (!newest) throw new Error('a push covers at least one event');
  const { spec } = newest;
  const msg: PushMessage = {
    v: 1,
    id: newest.id,
    ids: sorted.map((e) => e.id),
    count: sorted.length,
    title: spec.title,
    tag,
    ...(spec.body !== undefined ? { body: spec.body } : {}),
    ...(spec.url !== undefined ? { url: spec.url } : {}),
    ...(spec.icon !== undefined ? { icon: spec.icon } : {}),
    ...(spec.payload_json !== undefined ? { payload: parse(spec.payload_json) } : {}),
  };
  return fit(msg);
}

/** The message without its payload (what a 413 is answered with). */
export function thin(msg: PushMessage): PushMessage {
  const { payload: _p, ...rest } = msg;
  return fit(rest);
}

export const bytesOf = (msg: PushMessage): number => Buffer.byteLength(JSON.stringify(msg));

function fit(msg: PushMessage): PushMessage {
  let out = msg;
  if (bytesOf(out) > PLAINTEXT_MAX && 'payload' in out) {
    const { payload: _p, ...rest } = out;
    out = rest;
  }
  if (bytesOf(out) > PLAINTEXT_MAX && out.body !== undefined) {
    const { body: _b, ...rest } = out;
    out = rest;
  }
  while (bytesOf(out) > PLAINTEXT_MAX && out.ids.length > 1) {
    out = { ...out, ids: out.ids.slice(0, Math.max(1, Math.floor(out.ids.length / 2))) };
  }
  return out;
}

function parse(json: string): unknown {
  try {
    return JSON.parse(json);
  } catch {
    return undefined;
  }
}
