import type { EdgeSocket } from '../socket/edge-socket.js';
import type { InboxSocket } from './inbox-socket.js';

/**
 * The inbox side of the sockets that have one: herald.v1 sockets of an inbox key. Kept beside the
 * socket, not in it, so that every other socket holds not even the field.
 */
const inboxes = new WeakMap<EdgeSocket, InboxSocket>();

/** Gives a socket its inbox side (at admission). */
export function keepInbox(socket: EdgeSocket, inbox: InboxSocket): void {
  inboxes.set(socket, inbox);
}

/**
 * The inbox store's unread count after a change (`rt.unread.<account>.<recipient>`): every
 * herald.v1 socket of an inbox key gets `{"type":"inbox","unread"}`. Plain-framing sockets and
 * keys without inbox mode get nothing.
 */
export function forwardUnread(sockets: Iterable<EdgeSocket>, unread: number): void {
  for (const socket of sockets) inboxes.get(socket)?.unread(unread);
}
