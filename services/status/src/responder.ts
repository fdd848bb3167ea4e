import type { Logger } from '@herald/kit';
import {
  errorReply,
  HeraldError,
  queueGroups,
  StatusQuery,
  type StatusReply,
  type StatusTrimReply,
  StatusTrimRequest,
  subjects,
} from '@herald/proto';
import type { Kysely } from 'kysely';
import type { Msg, NatsConnection, Subscription } from 'nats';
import type { StatusDb } from './db-schema.js';
import { countsOver, lastUsed, recentEvents, statusOfIds } from './queries.js';
import { keyRefusals } from './refusals/store.js';
import { accountTopics, recentFanouts } from './topics/fanouts.js';
import { trimBefore } from './trim.js';

const DAY_MS = 24 * 3600_000;

export interface ResponderDeps {
  nc: NatsConnection;
  db: Kysely<StatusDb>;
  logger: Logger;
  retentionDays: number;
  now: () => number;
}

/**
 * Answers `subjects.statusQuery` (ingress's /events/status, the dashboard's figures) and
 * `subjects.statusTrim` (retention's weekly job), in the status queue group.
 */
export function serveStatusRequests(deps: ResponderDeps): Subscription[] {
  const { nc, logger } = deps;
  const query = nc.subscribe(subjects.statusQuery, {
    queue: queueGroups.status,
    callback: (err, msg) => {
      if (!err) void answer(msg, () => runQuery(deps, msg), logger);
    },
  });
  const trim = nc.subscribe(subjects.statusTrim, {
    queue: queueGroups.status,
    callback: (err, msg) => {
      if (!err) void answerTrim(deps, msg);
    },
  });
  return [query, trim];
}

async function runQuery(deps: ResponderDeps, msg: Msg): Promise<StatusReply> {
  const parsed = StatusQuery.safeParse(json(msg));
  if (!parsed.success) {
    return errorReply(
      new HeraldError('invalid_field', parsed.error.issues[0]?.message ?? 'bad query'),
    );
  }
  const q = parsed.data;
  switch (q.op) {
    case 'ids':
      return { v: 1, ok: true, events: await statusOfIds(deps.db, q.account_id, q.ids) };
    case 'counts': {
      const c = await countsOver(deps.db, q.account_id, q.key_id, q.window, q.until ?? deps.now());
      return { v: 1, ok: true, counts: c.counts, series: c.series };
    }
    case 'recent':
      return {
        v: 1,
        ok: true,
        events: await recentEvents(deps.db, q.account_id, {
          keyId: q.key_id,
          id: q.id,
          recipient: q.recipient,
          limit: q.limit,
        }),
      };
    case 'last_used':
      return { v: 1, ok: true, last_used: await lastUsed(deps.db, q.account_id) };
    case 'topics':
      return { v: 1, ok: true, topics: await accountTopics(deps.db, q.account_id, q) };
    case 'fanouts':
      return { v: 1, ok: true, fanouts: await recentFanouts(deps.db, q.account_id, q.limit) };
    case 'refusals':
      return {
        v: 1,
        ok: true,
        refusals: await keyRefusals(deps.db, q.account_id, q.key_id, q.limit),
      };
  }
}

async function answer(msg: Msg, run: () => Promise<StatusReply>, logger: Logger): Promise<void> {
  let reply: StatusReply;
  try {
    reply = await run();
  } catch (err) {
    logger.error({ err: String(err) }, 'status query failed');
    reply = errorReply(
      new HeraldError('unavailable', 'The status store is unavailable: retry shortly'),
    );
  }
  if (msg.reply) msg.respond(JSON.stringify(reply));
}

async function answerTrim(deps: ResponderDeps, msg: Msg): Promise<void> {
  let reply: StatusTrimReply;
  if (!StatusTrimRequest.safeParse(json(msg)).success) {
    reply = errorReply(
      new HeraldError('invalid_field', 'the request is not a StatusTrimRequest: send {"v":1}'),
    );
  } else {
    try {
      const cutoff = new Date(deps.now() - deps.retentionDays * DAY_MS);
      const result = await trimBefore(deps.db, cutoff);
      deps.logger.info({ ...result, cutoff: cutoff.toISOString() }, 'status rows trimmed');
      reply = { v: 1, ok: true, ...result };
    } catch (err) {
      deps.logger.error({ err: String(err) }, 'status trim failed');
      reply = errorReply(
        new HeraldError('unavailable', 'The status store could not trim its rows: retry later'),
      );
    }
  }
  if (msg.reply) msg.respond(JSON.stringify(reply));
}

function json(msg: Msg): unknown {
  try {
    return JSON.parse(new TextDecoder().decode(msg.data));
  } catch {
    return undefined;
  }
}
