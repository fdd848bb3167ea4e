/** The one-line explanations beside the choices (also in docs/operations.md, "Dashboard"). */
export const KEY_HINTS = {
  name: 'What you call it, shown wherever the key is listed or chosen; rename it at any time.',
  scope:
    'Sockets: the key your browsers and apps listen with. Sending: the key your servers post /notify with. A key shipped inside an app should not be able to send.',
  tokens:
    'Each socket then needs a token your server signs for one recipient, so the public key alone cannot listen as any user.',
  inbox:
    'Keeps every event for N days per recipient, with read state, for a notification list. Without it, an event for an offline recipient waits in a queue until it is delivered.',
} as const;
