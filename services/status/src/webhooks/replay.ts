import type { WebhookEventType } from '@herald/proto';
import { type Kysely, sql } from 'kysely';
import type { StatusDb, WebhookEndpointRow } from '../db-schema.js';
import { messageId, type Transition, webhookBody } from './body.js';
import { enqueue, type OutboxMessage } from './outbox.js';

/** Events read per page (each page its own transaction). */
const PAGE = 1000;

/**
 * The status_events columns of each type's transition, the first set one wins (`event.read`
 * lives on inbox_events). A live event answered 200 was proven on `sent`: its `delivered` is then.
 */
const COLUMNS_OF_TYPE = {
  'event.sent': ['sent_at'],
  'event.queued': ['queued_at'],
  'event.delivered': ['delivered_at', 'sent_at'],
  'event.failed': ['failed_at'],
} as const satisfies Record<string, readonly Column[]>;
type Column = 'sent_at' | 'queued_at' | 'delivered_at' | 'failed_at';

interface ReplayRow {
  id: string;
  key_id: string;
  recipient: string | null;
  sent_at: Date | null;
  queued_at: Date | null;
  delivered_at: Date | null;
  failed_at: Date | null;
  payload_json: string | null;
}

/**
 * Queues again, for one endpoint, every transition of its account's events at or after `since`
 * (epoch ms) of the types it subscribes to, with the ids they first had: a receiver that kept them
 * recognizes them. A message still waiting stays as it is; one that had failed is queued anew.
 * Stops at the endpoint's queue bound. Returns how many were queued. A replayed `delivered` does
 * not name the device (only the live record carries it).
 */
export async function replaySince(
  db: Kysely<StatusDb>,
  endpoint: WebhookEndpointRow,
  since: number,
  queueMax: number,
): Promise<number> {
  const from = new Date(since);
  const types = endpoint.events as WebhookEventType[];
  // A live event's delivery is its `sent` (answered 200 after a socket's proof): `delivered`
  // looks at both columns.
  const columns = [
    ...new Set(
      types.flatMap((t): readonly Column[] => (t === 'event.read' ? [] : COLUMNS_OF_TYPE[t])),
    ),
  ];
  let queued = 0;
  let full = false;
  const put = async (messages: OutboxMessage[]) => {
    const r = await db.transaction().execute((trx) => enqueue(trx, messages, queueMax, true));
    queued += r.queued;
    full ||= r.dropped.size > 0;
  };
  let after = '';
  while (columns.length > 0 && !full) {
    const rows = await sql<ReplayRow>`
      select id, key_id, recipient, sent_at, queued_at, delivered_at, failed_at, payload_json
      from status_events
      where account_id = ${endpoint.account_id} and id > ${after}
        and greatest(${sql.join(columns.map((c) => sql.ref(c)))}) >= ${from}
      order by id limit ${PAGE}`.execute(db);
    const messages: OutboxMessage[] = [];
    for (const r of rows.rows) {
      for (const type of types) {
        if (type === 'event.read') continue;
        const at = COLUMNS_OF_TYPE[type].reduce<Date | null>((a, c) => a ?? r[c], null);
        if (at === null || at < from) continue;
        messages.push(message(endpoint.id, type, endpoint.account_id, r, at, r.payload_json));
      }
    }
    await put(messages);
    if (rows.rows.length < PAGE) break;
    after = rows.rows[rows.rows.length - 1]?.id ?? after;
  }
  if (types.includes('event.read')) {
    let seq = '0';
    while (!full) {
      const rows = await sql<ReplayRow & { seq: string; read_at: Date }>`
        select i.seq, i.id, i.recipient, i.read_at, coalesce(s.key_id, '') as key_id, s.payload_json,
          null as sent_at, null as queued_at, null as delivered_at, null as failed_at
        from inbox_events i left join status_events s on s.id = i.id and s.account_id = i.account_id
        where i.account_id = ${endpoint.account_id} and i.read_at >= ${from} and i.seq > ${seq}
        order by i.seq limit ${PAGE}`.execute(db);
      await put(
        rows.rows.map((r) =>
          message(endpoint.id, 'event.read', endpoint.account_id, r, r.read_at, r.payload_json),
        ),
      );
      if (rows.rows.length < PAGE) break;
      seq = rows.rows[rows.rows.length - 1]?.seq ?? seq;
    }
  }
  return queued;
}

function message(
  endpointId: string,
  type: WebhookEventType,
  account: string,
  r: Pick<ReplayRow, 'id' | 'key_id' | 'recipient'>,
  at: Date,
  payloadJson: string | null,
): OutboxMessage {
  const t: Transition = {
    type,
    account,
    eventId: r.id,
    recipient: r.recipient,
    keyId: r.key_id,
    at: at.getTime(),
    payloadJson,
  };
  return { endpointId, msgId: messageId(t), type, body: webhookBody(t), transitionAt: at };
}
