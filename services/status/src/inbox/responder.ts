import type { Logger } from '@herald/kit';
import {
  errorReply,
  HeraldError,
  type InboxExpireReply,
  InboxExpireRequest,
  InboxQuery,
  type InboxUnreadNotice,
  queueGroups,
  subjects,
} from '@herald/proto';
import type { Kysely } from 'kysely';
import type { Msg, NatsConnection, Subscription } from 'nats';
import type { StatusDb } from '../db-schema.js';
import { cancelPushes } from '../push/due.js';
import type { EnqueueResult } from '../webhooks/outbox.js';
import { enqueueReads } from '../webhooks/transitions.js';
import {
  eventsAfter,
  expireChunk,
  type HistoryRow,
  historyPage,
  markRead,
  type Recipient,
  unreadCounts,
} from './queries.js';
import { InboxStoreBatcher, json } from './store-batcher.js';
import { UnreadPublisher } from './unread-publisher.js';

/** The largest sequence Postgres's bigint holds: a cursor above it names no event. */
const MAX_SEQ = 9223372036854775807n;
/** Room left in a reply for everything but the events' payloads, bytes. */
const REPLY_MARGIN = 4096;
/** Events one expiry statement removes (each chunk commits on its own). */
const EXPIRE_CHUNK = 10_000;

export interface InboxDeps {
  nc: NatsConnection;
  db: Kysely<StatusDb>;
  logger: Logger;
  cap: number;
  batchMax: number;
  now: () => number;
  /** WEBHOOK_ENDPOINT_QUEUE_MAX. */
  webhookQueueMax: number;
  /** Told what a read mark enqueued (metrics, the drop log, waking the sender). */
  webhooksWritten: (r: EnqueueResult) => void;
}

export interface InboxResponder {
  subs: Subscription[];
  /** Resolves once the stores taken so far are written. */
  idle(): Promise<void>;
}

/**
 * The inbox store's NATS side, in the status queue group: stores (`rt.inboxapi.store.*`), queries
 * and read marks (`rt.inboxapi.query.*`), each scoped by the account token of its subject, and
 * retention's expiry (`rt.inboxapi.expire`). After every change it publishes the recipient's
 * unread count on `rt.unread.<account>.<recipient>`.
 */
export function serveInbox(deps: InboxDeps): InboxResponder {
  const { nc, logger } = deps;
  const unread = new UnreadPublisher({
    count: (recipients) => unreadCounts(deps.db, recipients),
    publish: (r, n) => notify(nc, r, n),
    failed: (err) => logger.warn({ err: String(err) }, 'inbox unread counts not published'),
  });
  const publishUnread = (recipients: Recipient[]) => unread.changed(recipients);
  const batcher = new InboxStoreBatcher({
    db: deps.db,
    logger,
    cap: deps.cap,
    batchMax: deps.batchMax,
    changed: publishUnread,
  });
  const store = nc.subscribe(subjects.inboxStoreAll, {
    queue: queueGroups.status,
    callback: (err, msg) => {
      if (err) return;
      const account = accountOf(msg.subject);
      if (account) batcher.take(msg, account);
    },
  });
  const query = nc.subscribe(subjects.inboxQueryAll, {
    queue: queueGroups.status,
    callback: (err, msg) => {
      if (err) return;
      const account = accountOf(msg.subject);
      if (account) void answerQuery(deps, msg, account, publishUnread);
    },
  });
  const expire = nc.subscribe(subjects.inboxExpire, {
    queue: queueGroups.status,
    callback: (err, msg) => {
      if (!err) void answerExpire(deps, msg, publishUnread);
    },
  });
  return { subs: [store, query, expire], idle: () => batcher.idle() };
}

/** The account token of `rt.inboxapi.<verb>.<account>`. */
function accountOf(subject: string): string | undefined {
  const parts = subject.split('.');
  return parts.length === 4 && parts[3] ? parts[3] : undefined;
}

function notify(nc: NatsConnection, r: Recipient, unread: number): void {
  const notice: InboxUnreadNotice = { v: 1, unread };
  try {
    nc.publish(subjects.inboxUnread(r.account, r.recipient), JSON.stringify(notice));
  } catch {
    // A recipient token NATS cannot carry never got stored: the query was refused first.
  }
}

async function answerQuery(
  deps: InboxDeps,
  msg: Msg,
  account: string,
  publishUnread: (r: Recipient[]) => void,
): Promise<void> {
  let text: string;
  try {
    text = await runQuery(deps, msg, account, publishUnread);
  } catch (err) {
    const e =
      err instanceof HeraldError
        ? err
        : new HeraldError('unavailable', 'The inbox store is unavailable: retry shortly');
    if (!(err instanceof HeraldError))
      deps.logger.error({ err: String(err) }, 'inbox query failed');
    text = JSON.stringify(errorReply(e));
  }
  if (msg.reply) msg.respond(text);
}

async function runQuery(
  deps: InboxDeps,
  msg: Msg,
  account: string,
  publishUnread: (r: Recipient[]) => void,
): Promise<string> {
  const parsed = InboxQuery.safeParse(json(msg));
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const field = issue?.path.join('.') || undefined;
    throw new HeraldError(
      'invalid_field',
      `not an InboxQuery: ${field ?? ''} ${issue?.message ?? ''}`.trim(),
      {
        field,
      },
    );
  }
  const q = parsed.data;
  const r = { account, recipient: q.recipient };
  const budget = (deps.nc.info?.max_payload ?? 1024 * 1024) - REPLY_MARGIN;
  switch (q.op) {
    case 'unread': {
      const [unread] = await unreadCounts(deps.db, [r]);
      return JSON.stringify({ v: 1, ok: true, unread: unread ?? 0 });
    }
    case 'read': {
      if ((q.ids === undefined) === (q.all === undefined)) {
        throw new HeraldError('invalid_field', 'a read names `ids` or `all: true`, one of them', {
          field: 'ids',
        });
      }
      const now = new Date(deps.now());
      const { changed, webhooks } = await deps.db.transaction().execute(async (trx) => {
        const marked = await markRead(trx, r, q.ids ?? null, now);
        // The first read mark of each event enqueues its `event.read`, in the same transaction.
        const enqueued = await enqueueReads(trx, r, marked, now, deps.webhookQueueMax);
        // Read on some device: its push, if one waits, is not sent.
        await cancelPushes(
          trx,
          marked.map((id) => ({ id, account_id: r.account })),
        );
        return { changed: marked.length, webhooks: enqueued };
      });
      deps.webhooksWritten(webhooks);
      const [unread] = await unreadCounts(deps.db, [r]);
      if (changed > 0) publishUnread([r]);
      return JSON.stringify({ v: 1, ok: true, unread: unread ?? 0 });
    }
    case 'history': {
      if (q.before !== null && BigInt(q.before) > MAX_SEQ) {
        throw new HeraldError('invalid_field', 'before must be a `next` value', {
          field: 'before',
        });
      }
      const page = await historyPage(deps.db, r, q.before, q.limit);
      const events = fit(page.events, budget);
      const cut = events.length < page.events.length;
      const last = events[events.length - 1];
      const next = cut && last ? String(last.seq) : page.next;
      const items = events.map(
        (e) =>
          `{"id":${JSON.stringify(e.id)},"ts":${e.ts},"payload":${e.payloadJson},"read":${e.read}}`,
      );
      return `{"v":1,"ok":true,"events":[${items.join(',')}],"next":${JSON.stringify(next)}}`;
    }
    case 'after': {
      const rows = fit(await eventsAfter(deps.db, r, q.after, q.limit), budget);
      const catchUp = rows.map((e) => ({
        seq: e.seq,
        id: e.id,
        ts: e.ts,
        payload_json: e.payloadJson,
        ...(e.topic ? { topic: e.topic } : {}),
      }));
      return JSON.stringify({ v: 1, ok: true, catch_up: catchUp });
    }
  }
}

/**
 * The leading events whose payloads fit one NATS message (always at least one, so paging moves
 * on): a page or catch-up may hold fewer than its limit, its cursor still exact.
 */
function fit(rows: HistoryRow[], budget: number): HistoryRow[] {
  let bytes = 0;
  const out: HistoryRow[] = [];
  for (const r of rows) {
    bytes += Buffer.byteLength(r.payloadJson) + r.id.length + 64;
    if (out.length > 0 && bytes > budget) break;
    out.push(r);
  }
  return out;
}

async function answerExpire(
  deps: InboxDeps,
  msg: Msg,
  publishUnread: (r: Recipient[]) => void,
): Promise<void> {
  let reply: InboxExpireReply;
  if (!InboxExpireRequest.safeParse(json(msg)).success) {
    reply = errorReply(new HeraldError('invalid_field', 'not an InboxExpireRequest: send {"v":1}'));
  } else {
    try {
      const now = new Date(deps.now());
      let removed = 0;
      for (;;) {
        const chunk = await expireChunk(deps.db, now, EXPIRE_CHUNK);
        removed += chunk.removed;
        if (chunk.unreadChanged.length > 0) publishUnread(chunk.unreadChanged);
        if (chunk.removed < EXPIRE_CHUNK) break;
      }
      deps.logger.info({ removed }, 'expired inbox events removed');
      reply = { v: 1, ok: true, removed };
    } catch (err) {
      deps.logger.error({ err: String(err) }, 'inbox expiry failed');
      reply = errorReply(
        new HeraldError('unavailable', 'The inbox store could not expire events: retry later'),
      );
    }
  }
  if (msg.reply) msg.respond(JSON.stringify(reply));
}
