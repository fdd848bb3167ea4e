/**
 * Who may say what on NATS: each Herald service's user and a customer backend's user, built from
 * the subjects of subjects.ts (the one source; deploy/nats/users.conf is generated from this file
 * by `npm run -s nats-users`, and the auth service issues a backend user's permissions from it).
 *
 * JetStream is reached through nats-server's own API subjects: each service gets only the verbs
 * it calls (`$JS.API.CONSUMER.CREATE.*.>` but not `$JS.API.STREAM.DELETE.*`, …). The stream token
 * is a wildcard: Herald's streams (HERALD_QUEUE_<n>, HERALD_STATUS, KV_herald_*) are not one token
 * prefix, and NATS wildcards match whole tokens only.
 */
import { billingSubjects } from './billing.js';
import { CONNECTIONS_BUCKET } from './connections.js';
import { PUSH_API_SUBJECT } from './push.js';
import { PUSHER_APP_SUBJECT, pusherSubjects } from './pusher.js';
import { assertToken } from './subjects.js';
import { fanoutSubjects, TOPIC_API_SUBJECT } from './topics.js';
import { WEBHOOK_API_SUBJECT } from './webhooks.js';

/** One direction's lists, as nats-server's `permissions` block takes them. */
export interface SubjectList {
  allow: string[];
  deny?: string[];
}

export interface NatsPermissions {
  publish: SubjectList;
  subscribe: SubjectList;
  /** May publish to the reply subject of a request it received (a responder). */
  allowResponses: boolean;
}

/** The wildcard form of every subject of subjects.ts, what a permission names. */
export const subjectPatterns = {
  live: 'rt.live.*.*',
  queue: 'rt.queue.>',
  queued: 'rt.queued.*.*',
  /** subjects.recipient(a, r) is `rt.*.<a>.<r>`: a subscription needs this whole shape. */
  recipient: 'rt.*.*.*',
  dispatch: 'rt.dispatch.*',
  dispatchBatch: 'rt.dispatch.batch.*',
  liveHolders: 'rt.holders.*',
  edgeLive: 'rt.edgelive.*.*',
  authVerify: 'rt.auth.verify',
  authInvalidate: 'rt.auth.invalidate',
  status: 'rt.status.*',
  statusQuery: 'rt.statusapi.query',
  /** A key's refusals (issue 45): ingress publishes, the status service keeps the last few. */
  refusals: 'rt.refusals.*',
  statusTrim: 'rt.statusapi.trim',
  billingNotice: billingSubjects.noticeAll,
  inboxStore: 'rt.inboxapi.store.*',
  inboxQuery: 'rt.inboxapi.query.*',
  inboxExpire: 'rt.inboxapi.expire',
  /** Every subject of the inbox API (an edge's rt.*.*.* must not read its stores and queries). */
  inboxApi: 'rt.inboxapi.>',
  inboxUnread: 'rt.unread.*.*',
  /** Webhook endpoint operations: auth asks, the status service answers. */
  webhookApi: WEBHOOK_API_SUBJECT,
  /** Push credentials and subscriptions: auth and ingress ask, the status service answers. */
  pushApi: PUSH_API_SUBJECT,
  /** Topic membership and fan-out snapshots (issue 44): ingress asks, the status service answers. */
  topicApi: TOPIC_API_SUBJECT,
  /** A topic event's chunks, published into HERALD_FANOUT by ingress and drained by its workers. */
  fanout: fanoutSubjects.pattern,
  /** A Pusher app's lookup: the edge and ingress ask, auth answers (proto/pusher.ts). */
  pusherApp: PUSHER_APP_SUBJECT,
  /** A Pusher channel's live fan-out: ingress publishes, edges subscribe per channel. */
  pusherChannel: pusherSubjects.channelPattern,
  /** A Pusher `terminate_connections`: ingress publishes, edges get it on `rt.*.<a>.<r>`. */
  pusherTerminate: pusherSubjects.terminatePattern,
} as const;

/**
 * Where request replies land (nats.js's default inbox prefix), and the status stream's PubAcks of
 * the status records ingress and the edges publish with a reply subject there (lib/status-client
 * status-acks.ts): JetStream answers from the server itself, so the publisher needs no more.
 */
export const INBOX = '_INBOX.>';
/** Where nats-server sends auth callout requests (the auth service answers them). */
export const AUTH_CALLOUT_SUBJECT = '$SYS.REQ.USER.AUTH';

/** nats-server's JetStream API, one verb at a time (`*` is the stream, then the consumer). */
const js = {
  info: '$JS.API.INFO',
  streamInfo: '$JS.API.STREAM.INFO.*',
  streamCreate: '$JS.API.STREAM.CREATE.*',
  streamUpdate: '$JS.API.STREAM.UPDATE.*',
  streamDelete: '$JS.API.STREAM.DELETE.*',
  streamPurge: '$JS.API.STREAM.PURGE.*',
  streamNames: '$JS.API.STREAM.NAMES',
  msgGet: '$JS.API.STREAM.MSG.GET.*',
  msgDelete: '$JS.API.STREAM.MSG.DELETE.*',
  directGet: '$JS.API.DIRECT.GET.>',
  consumerCreate: '$JS.API.CONSUMER.CREATE.>',
  consumerDurableCreate: '$JS.API.CONSUMER.DURABLE.CREATE.*.*',
  consumerInfo: '$JS.API.CONSUMER.INFO.*.*',
  consumerDelete: '$JS.API.CONSUMER.DELETE.*.*',
  consumerReset: '$JS.API.CONSUMER.RESET.*.*',
  consumerList: '$JS.API.CONSUMER.LIST.*',
  consumerNames: '$JS.API.CONSUMER.NAMES.*',
  next: '$JS.API.CONSUMER.MSG.NEXT.*.*',
  ack: '$JS.ACK.>',
  flowControl: '$JS.FC.>',
} as const;

/** Publishing to one KV bucket's keys (a put or delete). */
const kvKeys = (bucket: string) => `$KV.${bucket}.>`;
/** What every KV reader needs: bind (stream info), get (direct or message get). */
const kvRead = [js.info, js.streamInfo, js.directGet, js.msgGet];
/** Creating or widening a bucket at start (lib/kit ensureKvBucket). */
const kvEnsure = [js.streamCreate, js.streamUpdate];

export const NATS_SERVICES = ['auth', 'ingress-api', 'socket-edge', 'retention', 'status'] as const;
export type NatsService = (typeof NATS_SERVICES)[number];

/** A service's NATS user name: `herald-<service>`. */
export const natsUserOf = (service: NatsService) => `herald-${service}`;
/** The operator's user (backups, the `nats` CLI, the admin CLI's checks): every subject. */
export const NATS_ADMIN_USER = 'herald-admin';

const sorted = (xs: readonly string[]) => [...new Set(xs)].sort();

function perms(
  pub: readonly string[],
  sub: readonly string[],
  opts: { allowResponses?: boolean; denySub?: string[] } = {},
): NatsPermissions {
  return {
    publish: { allow: sorted(pub) },
    subscribe: { allow: sorted([...sub, INBOX]), ...(opts.denySub ? { deny: opts.denySub } : {}) },
    allowResponses: opts.allowResponses ?? false,
  };
}

/** Every Herald service's permissions. */
export const servicePermissions: Record<NatsService, NatsPermissions> = {
  // Keys and accounts: answers rt.auth.verify and the auth callout, broadcasts invalidations,
  // forwards billing notices to the dashboard as dispatches, reads the open-connection counts
  // and asks the status service for the dashboard's figures.
  auth: perms(
    [
      subjectPatterns.authInvalidate,
      subjectPatterns.billingNotice,
      subjectPatterns.dispatch,
      subjectPatterns.statusQuery,
      subjectPatterns.webhookApi,
      subjectPatterns.pushApi,
      ...kvRead,
      // Reading every key of the connection counts is an ordered consumer on the bucket.
      js.consumerCreate,
      js.consumerDelete,
      js.flowControl,
    ],
    [subjectPatterns.authVerify, subjectPatterns.pusherApp, AUTH_CALLOUT_SUBJECT],
    { allowResponses: true },
  ),
  // Dispatch: live requests, queue publishes and notices, the batch's two steps, status records,
  // the queue's streams and floor bucket, the idempotency and rate buckets it creates at start.
  'ingress-api': perms(
    [
      subjectPatterns.live,
      subjectPatterns.queue,
      subjectPatterns.queued,
      subjectPatterns.liveHolders,
      subjectPatterns.edgeLive,
      subjectPatterns.authVerify,
      subjectPatterns.status,
      subjectPatterns.statusQuery,
      // A key's refusals, aggregated (proto/refusals.ts): publish only.
      subjectPatterns.refusals,
      // Inbox keys: events kept before the answer; /inbox/history and /inbox/read.
      subjectPatterns.inboxStore,
      subjectPatterns.inboxQuery,
      // Push subscriptions registered and removed through /push/subscriptions.
      subjectPatterns.pushApi,
      // Topics: membership and snapshots; the fan-out's chunks and its stream, made at start.
      subjectPatterns.topicApi,
      subjectPatterns.fanout,
      js.streamInfo,
      js.streamCreate,
      js.streamUpdate,
      subjectPatterns.pusherApp,
      subjectPatterns.pusherChannel,
      subjectPatterns.pusherTerminate,
      ...kvRead,
      ...kvEnsure,
      js.streamNames,
      js.consumerList,
      js.consumerNames,
      js.consumerCreate,
      js.consumerInfo,
      js.consumerDelete,
      js.next,
      js.ack,
      js.msgDelete,
      js.streamDelete,
      kvKeys('herald_idempotency'),
      kvKeys('herald_dispatch_rate'),
      kvKeys('herald_queue_floors'),
    ],
    [subjectPatterns.dispatch, subjectPatterns.dispatchBatch, subjectPatterns.authInvalidate],
    { allowResponses: true },
  ),
  // Sockets: a recipient's live and queued subjects, the batch steps, its pull consumers on the
  // queue streams (create, fetch, ack), status records, the connection-count and device-position
  // buckets.
  'socket-edge': perms(
    [
      subjectPatterns.authVerify,
      subjectPatterns.pusherApp,
      subjectPatterns.status,
      // Inbox keys: the unread count, history and read marks, a device's catch-up.
      subjectPatterns.inboxQuery,
      ...kvRead,
      ...kvEnsure,
      js.consumerCreate,
      js.consumerDurableCreate,
      js.consumerInfo,
      js.next,
      js.ack,
      js.flowControl,
      // Applying a recorded ack floor moves a new consumer past it (lib/queue ack-floors); an
      // edge deletes nothing from the queue.
      js.consumerReset,
      kvKeys(CONNECTIONS_BUCKET),
      kvKeys('herald_queue_floors'),
      // Each device's proven position in its recipient's queue (per-device delivery).
      kvKeys('herald_device_positions'),
    ],
    [
      subjectPatterns.recipient,
      subjectPatterns.liveHolders,
      subjectPatterns.edgeLive,
      subjectPatterns.authInvalidate,
      subjectPatterns.pusherChannel,
    ],
    // rt.*.*.* also matches a batch dispatch and the inbox API's stores and queries (4 tokens):
    // an edge never reads those. It does read rt.unread.<a>.<r>, the recipient's unread count.
    { allowResponses: true, denySub: [subjectPatterns.dispatchBatch, subjectPatterns.inboxApi] },
  ),
  // Cleanup: reads and trims the queue streams and their consumers, wakes edges, trims status.
  retention: perms(
    [
      subjectPatterns.queued,
      subjectPatterns.statusTrim,
      subjectPatterns.inboxExpire,
      ...kvRead,
      ...kvEnsure,
      js.streamNames,
      js.streamPurge,
      js.msgDelete,
      js.consumerCreate,
      js.consumerInfo,
      js.consumerList,
      js.consumerNames,
      js.consumerDelete,
      js.next,
      js.flowControl,
      kvKeys('herald_retention'),
      kvKeys('herald_queue_floors'),
    ],
    [],
  ),
  // Status: its stream and durable consumer, the queries and trims it answers; the inbox store;
  // webhook endpoint and push operations (it sends webhooks and pushes over HTTPS, never NATS).
  status: perms(
    [
      js.info,
      js.streamInfo,
      js.streamCreate,
      js.streamUpdate,
      js.consumerCreate,
      js.consumerDurableCreate,
      js.consumerInfo,
      js.next,
      js.ack,
      // Inbox mode: each recipient's unread count after every change.
      subjectPatterns.inboxUnread,
    ],
    [
      subjectPatterns.statusQuery,
      subjectPatterns.statusTrim,
      subjectPatterns.refusals,
      subjectPatterns.inboxStore,
      subjectPatterns.inboxQuery,
      subjectPatterns.inboxExpire,
      subjectPatterns.webhookApi,
      subjectPatterns.pushApi,
      subjectPatterns.topicApi,
    ],
    { allowResponses: true },
  ),
};

/**
 * A customer backend's user: requests to its own account's dispatch subjects (single and batch)
 * and their replies, nothing else (no live, queue or JetStream subject, no other account).
 */
export function backendPermissions(account: string): NatsPermissions {
  assertToken('account', account);
  return perms([`rt.dispatch.${account}`, `rt.dispatch.batch.${account}`], []);
}

/** NATS subject matching, as nats-server applies a permission: `*` one token, `>` the rest. */
export function subjectMatches(pattern: string, subject: string): boolean {
  const p = pattern.split('.');
  const s = subject.split('.');
  for (let i = 0; i < p.length; i++) {
    if (p[i] === '>') return s.length > i;
    if (i >= s.length || (p[i] !== '*' && p[i] !== s[i])) return false;
  }
  return p.length === s.length;
}

/** Whether one direction's lists let a literal subject through (allowed, and not denied). */
export function permits(list: SubjectList, subject: string): boolean {
  return (
    list.allow.some((p) => subjectMatches(p, subject)) &&
    !(list.deny ?? []).some((p) => subjectMatches(p, subject))
  );
}
