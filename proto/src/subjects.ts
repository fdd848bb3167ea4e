/**
 * Every NATS subject Herald speaks, built by functions so no call site concatenates strings.
 *
 * Tokens are account ids and recipient ids, both lower-case UUIDs, so they never contain
 * the NATS token separator `.` or the wildcards `*` and `>`. {@link assertToken} enforces it.
 */

const TOKEN = /^[0-9a-f-]{36}$/;

/** Throws when a value cannot be one subject token (an account or recipient id). */
export function assertToken(kind: 'account' | 'recipient', value: string): string {
  if (!TOKEN.test(value)) {
    throw new TypeError(
      `${kind} must be a lower-case UUID to be used in a subject, got ${JSON.stringify(value)}`,
    );
  }
  return value;
}

export const subjects = {
  /** Live push: a NATS request every edge holding a socket of the recipient answers. */
  live: (account: string, recipient: string) =>
    `rt.live.${assertToken('account', account)}.${assertToken('recipient', recipient)}`,
  /** The recipient's offline queue subject inside the queue stream. */
  queue: (account: string, recipient: string) =>
    `rt.queue.${assertToken('account', account)}.${assertToken('recipient', recipient)}`,
  /** Everything the queue stream captures. */
  queueAll: 'rt.queue.>',
  /**
   * Core-NATS notice that an event was just queued for a recipient. An edge that holds a
   * socket of that recipient starts (or keeps) draining the queue. It closes the race in
   * which the event was queued after the edge's connect-time check of the queue.
   */
  queued: (account: string, recipient: string) =>
    `rt.queued.${assertToken('account', account)}.${assertToken('recipient', recipient)}`,
  /** Service-to-service dispatch: same JSON body as `POST /notify`, same result as a reply. */
  dispatch: (account: string) => `rt.dispatch.${assertToken('account', account)}`,
  /** What ingress subscribes to (in a queue group) to serve every account's dispatches. */
  dispatchAll: 'rt.dispatch.*',
  /** Key verification request/reply served by the auth service. */
  authVerify: 'rt.auth.verify',
  /** Broadcast when a key is revoked or an account changes: callers drop cached verifications. */
  authInvalidate: 'rt.auth.invalidate',
} as const;

/** Queue groups, so a request or dispatch is served by exactly one instance. */
export const queueGroups = {
  auth: 'herald-auth',
  ingress: 'herald-ingress',
} as const;

/** Splits a dispatch subject back into its account token; undefined when it is not one. */
export function accountOfDispatchSubject(subject: string): string | undefined {
  const parts = subject.split('.');
  if (parts.length !== 3 || parts[0] !== 'rt' || parts[1] !== 'dispatch') return undefined;
  const account = parts[2];
  return account !== undefined && TOKEN.test(account) ? account : undefined;
}
