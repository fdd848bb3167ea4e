/**
 * Every NATS subject Herald speaks, built by functions so no call site concatenates strings.
 *
 * Tokens are account ids and recipient ids, both lower-case UUIDs, so they never contain
 * the NATS token separator `.` or the wildcards `*` and `>`. {@link assertToken} enforces it.
 */

const TOKEN = /^[0-9a-f-]{36}$/;

/** Throws when a value cannot be one subject token (an account or recipient id). */
export function assertToken(kind: 'account' | 'recipient' | 'edge', value: string): string {
  if (!TOKEN.test(value)) {
    throw new TypeError(
      `${kind} must be a lower-case UUID to be used in a subject, got ${JSON.stringify(value)}`,
    );
  }
  return value;
}

/**
 * Slots the offline queue's subjects are spread over: a queue subject carries its recipient's slot
 * (two hex digits, `00`..`ff`) as its third token, and each queue stream captures a fixed set of
 * slots (lib/queue's QueueLayout: slot mod the number of streams). The slot depends on nothing but
 * the account and recipient ids, so every service, release and language computes the same one.
 */
export const QUEUE_SLOTS = 256;

/**
 * A recipient's queue slot: 32-bit FNV-1a over the UTF-8 bytes of `<account>.<recipient>`
 * (ids are lower-case ASCII), mod {@link QUEUE_SLOTS}. FNV-1a because it is stable, tiny, and
 * spreads UUIDs evenly; it is not a security boundary (the account token in the subject is).
 */
export function queueSlot(account: string, recipient: string): number {
  return slotOfKey(`${assertToken('account', account)}.${assertToken('recipient', recipient)}`);
}

/** FNV-1a of `<account>.<recipient>` (tokens already checked), mod QUEUE_SLOTS. */
function slotOfKey(key: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < key.length; i++) {
    h ^= key.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h % QUEUE_SLOTS;
}

/** A slot as its subject token: two lower-case hex digits. */
function slotToken(slot: number): string {
  if (!Number.isInteger(slot) || slot < 0 || slot >= QUEUE_SLOTS) {
    throw new RangeError(`queue slot must be an integer in [0, ${QUEUE_SLOTS}), got ${slot}`);
  }
  return slot.toString(16).padStart(2, '0');
}

/** The subjects ingress's deliver step uses for one recipient, and its queue slot. */
export interface RecipientSubjects {
  /** {@link subjects.live} */
  live: string;
  /** {@link subjects.queue} */
  queue: string;
  /** {@link subjects.queued} */
  queued: string;
  /** {@link queueSlot} */
  slot: number;
}

/**
 * {@link subjects.live}, {@link subjects.queue}, {@link subjects.queued} and {@link queueSlot} of
 * one recipient from one check of its two tokens, the same strings and slot (and the same
 * TypeError for a bad token) as those give one by one. An offline event needs all four, and each
 * checked both tokens again (eight regex tests and two hashes per event on the batch path).
 */
export function recipientSubjects(account: string, recipient: string): RecipientSubjects {
  const pair = `${assertToken('account', account)}.${assertToken('recipient', recipient)}`;
  const slot = slotOfKey(pair);
  return {
    live: `rt.live.${pair}`,
    queue: `rt.queue.${slotToken(slot)}.${pair}`,
    queued: `rt.queued.${pair}`,
    slot,
  };
}

export const subjects = {
  /** Live push: a NATS request every edge holding a socket of the recipient answers. */
  live: (account: string, recipient: string) =>
    `rt.live.${assertToken('account', account)}.${assertToken('recipient', recipient)}`,
  /**
   * The recipient's offline queue subject: `rt.queue.<slot>.<account>.<recipient>`, captured by
   * the queue stream that owns the slot ({@link queueSlot}).
   */
  queue: (account: string, recipient: string) =>
    `rt.queue.${slotToken(queueSlot(account, recipient))}.${account}.${recipient}`,
  /** Everything one queue slot holds: what a queue stream captures, one entry per slot it owns. */
  queueSlot: (slot: number) => `rt.queue.${slotToken(slot)}.>`,
  /** Every queue subject, all slots (and the single stream's subjects before partitioning). */
  queueAll: 'rt.queue.>',
  /**
   * Before partitioning (one stream, `HERALD_QUEUE`), a recipient's queue subject:
   * `rt.queue.<account>.<recipient>`. Only the migration reads it, to move what that stream holds.
   */
  legacyQueue: (account: string, recipient: string) =>
    `rt.queue.${assertToken('account', account)}.${assertToken('recipient', recipient)}`,
  /**
   * Core-NATS notice that an event was just queued for a recipient. An edge that holds a
   * socket of that recipient starts (or keeps) draining the queue. It closes the race in
   * which the event was queued after the edge's connect-time check of the queue.
   */
  queued: (account: string, recipient: string) =>
    `rt.queued.${assertToken('account', account)}.${assertToken('recipient', recipient)}`,
  /**
   * Every subject of one recipient, `rt.*.<account>.<recipient>`: {@link subjects.live} and
   * {@link subjects.queued} in one subscription, which is what an edge holds per connected
   * recipient (each NATS subscription costs the edge heap per connected recipient, and the server
   * a SUB per connect). {@link recipientSubjectKind} tells the two apart; the legacy queue
   * subject, the only other one of this shape, is published to by nobody since partitioning.
   */
  recipient: (account: string, recipient: string) =>
    `rt.*.${assertToken('account', account)}.${assertToken('recipient', recipient)}`,
  /** Service-to-service dispatch: same JSON body as `POST /notify`, same result as a reply. */
  dispatch: (account: string) => `rt.dispatch.${assertToken('account', account)}`,
  /** What ingress subscribes to (in a queue group) to serve every account's dispatches. */
  dispatchAll: 'rt.dispatch.*',
  /**
   * Service-to-service batch dispatch: same JSON body as `POST /notify/batch`, same results as a
   * reply. Four tokens, so `dispatchAll` (three) never sees a batch and no account id collides.
   */
  dispatchBatch: (account: string) => `rt.dispatch.batch.${assertToken('account', account)}`,
  /** What ingress subscribes to (in a queue group) to serve every account's batch dispatches. */
  dispatchBatchAll: 'rt.dispatch.batch.*',
  /**
   * A batch's question to every edge: which of these recipients do you hold a socket of?
   * (proto/live-batch.ts, step 1). Every edge subscribes to {@link subjects.liveHoldersAll}.
   */
  liveHolders: (account: string) => `rt.holders.${assertToken('account', account)}`,
  liveHoldersAll: 'rt.holders.*',
  /** A batch's live events for one edge (proto/live-batch.ts, step 2): a request that edge answers. */
  edgeLive: (edge: string, account: string) =>
    `rt.edgelive.${assertToken('edge', edge)}.${assertToken('account', account)}`,
  /** What one edge subscribes to for step 2, every account. */
  edgeLiveAll: (edge: string) => `rt.edgelive.${assertToken('edge', edge)}.*`,
  /** Key verification request/reply served by the auth service. */
  authVerify: 'rt.auth.verify',
  /** Broadcast when a key is revoked or an account changes: callers drop cached verifications. */
  authInvalidate: 'rt.auth.invalidate',
  /** Status changes of an account's events (proto/status.ts), captured by the status stream. */
  status: (account: string) => `rt.status.${assertToken('account', account)}`,
  /** Everything the status stream captures. */
  statusAll: 'rt.status.>',
  /** Requests to the status service (queries). Outside rt.status.> so the stream never captures them. */
  statusQuery: 'rt.statusapi.query',
  /**
   * A key's refusals, aggregated by ingress (proto/refusals.ts), core NATS to the status service.
   * Outside rt.status.>: refusals are never status records and fire no webhook.
   */
  refusals: (account: string) => `rt.refusals.${assertToken('account', account)}`,
  /** What the status service subscribes to (in a queue group): every account's refusals. */
  refusalsAll: 'rt.refusals.*',
  /** Retention's request to trim status rows older than the status service's window. */
  statusTrim: 'rt.statusapi.trim',
  /** Ingress keeps an inbox key's events (proto/inbox.ts), answered by the inbox store. */
  inboxStore: (account: string) => `rt.inboxapi.store.${assertToken('account', account)}`,
  /** What the inbox store subscribes to (in a queue group): every account's stores. */
  inboxStoreAll: 'rt.inboxapi.store.*',
  /** Edges and ingress read and mark one account's inboxes (proto/inbox.ts InboxQuery). */
  inboxQuery: (account: string) => `rt.inboxapi.query.${assertToken('account', account)}`,
  inboxQueryAll: 'rt.inboxapi.query.*',
  /** Retention's request to remove expired inbox events (delivered and past their days). */
  inboxExpire: 'rt.inboxapi.expire',
  /**
   * A recipient's unread count after a change (proto/inbox.ts InboxUnreadNotice), core NATS.
   * Matches {@link subjects.recipient}, so an edge gets it on the subscription it already holds.
   */
  inboxUnread: (account: string, recipient: string) =>
    `rt.unread.${assertToken('account', account)}.${assertToken('recipient', recipient)}`,
} as const;

const LIVE_PREFIX = 'rt.live.';
const QUEUED_PREFIX = 'rt.queued.';
const UNREAD_PREFIX = 'rt.unread.';
const TERMINATE_PREFIX = 'rt.pterm.';

/**
 * Which of a recipient's subjects a message matching {@link subjects.recipient} came on: `live`
 * (a live push request), `queued` (a queued-event notice), `unread` (the inbox's unread count),
 * `terminate` (a Pusher `terminate_connections`, proto/pusher.ts), or undefined for anything else.
 */
export function recipientSubjectKind(
  subject: string,
): 'live' | 'queued' | 'unread' | 'terminate' | undefined {
  if (subject.startsWith(LIVE_PREFIX)) return 'live';
  if (subject.startsWith(QUEUED_PREFIX)) return 'queued';
  if (subject.startsWith(UNREAD_PREFIX)) return 'unread';
  if (subject.startsWith(TERMINATE_PREFIX)) return 'terminate';
  return undefined;
}

/** Queue groups, so a request or dispatch is served by exactly one instance. */
export const queueGroups = {
  auth: 'herald-auth',
  ingress: 'herald-ingress',
  status: 'herald-status',
} as const;

/** Splits a dispatch subject back into its account token; undefined when it is not one. */
export function accountOfDispatchSubject(subject: string): string | undefined {
  const parts = subject.split('.');
  if (parts.length !== 3 || parts[0] !== 'rt' || parts[1] !== 'dispatch') return undefined;
  const account = parts[2];
  return account !== undefined && TOKEN.test(account) ? account : undefined;
}

/** The account token of a subject of the form `<...prefix>.<account>` ending in one; else undefined. */
export function accountOfLastToken(subject: string): string | undefined {
  const account = subject.slice(subject.lastIndexOf('.') + 1);
  return TOKEN.test(account) ? account : undefined;
}

/** Splits a batch dispatch subject back into its account token; undefined when it is not one. */
export function accountOfDispatchBatchSubject(subject: string): string | undefined {
  const parts = subject.split('.');
  if (parts.length !== 4 || parts[0] !== 'rt' || parts[1] !== 'dispatch' || parts[2] !== 'batch')
    return undefined;
  const account = parts[3];
  return account !== undefined && TOKEN.test(account) ? account : undefined;
}
