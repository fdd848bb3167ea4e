import type { EventStatus, WebhookEventType } from '@herald/proto';
import { type Kysely, sql } from 'kysely';
import type { StatusDb } from '../db-schema.js';
import type { FirstTransition } from '../merge.js';
import { messageId, type Transition, webhookBody } from './body.js';
import { type EnqueueResult, enqueue, type OutboxMessage } from './outbox.js';

/** The webhook type of each status's first transition. */
export const TYPE_OF_STATUS = {
  sent: 'event.sent',
  pending: 'event.queued',
  delivered: 'event.delivered',
  failed: 'event.failed',
} as const satisfies Record<EventStatus, WebhookEventType>;

interface SubscribedEndpoint {
  id: string;
  account_id: string;
  events: string[];
}

const NOTHING: EnqueueResult = { queued: 0, dropped: new Map() };

/**
 * Enqueues transitions for the enabled endpoints of their accounts subscribed to their types,
 * within the caller's transaction. One indexed query when none of the accounts has an endpoint
 * (the usual case), so the writer's cost without webhooks stays one round trip per batch.
 *
 * @param withPayload ids whose row holds an opted-in payload a transition did not carry itself
 */
export async function enqueueTransitions(
  trx: Kysely<StatusDb>,
  transitions: readonly Transition[],
  withPayload: ReadonlySet<string>,
  queueMax: number,
): Promise<EnqueueResult> {
  if (transitions.length === 0) return NOTHING;
  const accounts = [...new Set(transitions.map((t) => t.account))];
  const endpoints = await trx
    .selectFrom('webhook_endpoints')
    .select(['id', 'account_id', 'events'])
    .where('account_id', 'in', accounts)
    .where('disabled_at', 'is', null)
    .execute();
  if (endpoints.length === 0) return NOTHING;
  const byAccount = new Map<string, SubscribedEndpoint[]>();
  for (const e of endpoints) {
    const list = byAccount.get(e.account_id);
    if (list) list.push(e);
    else byAccount.set(e.account_id, [e]);
  }
  const wanted = transitions.filter((t) =>
    byAccount.get(t.account)?.some((e) => e.events.includes(t.type)),
  );
  const payloads = await payloadsOf(
    trx,
    wanted.filter((t) => t.payloadJson == null && withPayload.has(t.eventId)).map((t) => t.eventId),
  );
  const messages: OutboxMessage[] = [];
  for (const t of wanted) {
    const full = t.payloadJson == null ? { ...t, payloadJson: payloads.get(t.eventId) } : t;
    const body = webhookBody(full);
    const msgId = messageId(t);
    const transitionAt = new Date(t.at);
    for (const e of byAccount.get(t.account) ?? []) {
      if (e.events.includes(t.type))
        messages.push({ endpointId: e.id, msgId, type: t.type, body, transitionAt });
    }
  }
  return enqueue(trx, messages, queueMax);
}

/**
 * The writer's first transitions as webhook transitions. A live event is answered 200 (`sent`)
 * only once a socket proved receipt (ingress's live push waits for the proof), so its `sent` is
 * also its `event.delivered`, at the same instant. If the same event is later recorded
 * `delivered` as well (a copy queued after a late proof), that message has the same id
 * (`<id>:event.delivered`) and the outbox keeps the first.
 */
export function transitionsOf(firsts: readonly FirstTransition[]): Transition[] {
  return firsts.flatMap((f) => {
    const t: Transition = {
      type: TYPE_OF_STATUS[f.status],
      account: f.row.account_id,
      eventId: f.row.id,
      recipient: f.row.recipient,
      keyId: f.row.key_id,
      at: f.at.getTime(),
      device: f.status === 'delivered' ? f.device : undefined,
      payloadJson: f.payloadJson,
    };
    return f.status === 'sent' ? [t, { ...t, type: 'event.delivered' }] : [t];
  });
}

/**
 * `event.read` for the events a read mark marked first (inbox mode), within its transaction. One
 * query when the account has no endpoint subscribed to it; the events' key and payload come from
 * their status rows.
 */
export async function enqueueReads(
  trx: Kysely<StatusDb>,
  r: { account: string; recipient: string },
  ids: readonly string[],
  at: Date,
  queueMax: number,
): Promise<EnqueueResult> {
  if (ids.length === 0) return NOTHING;
  const any = await trx
    .selectFrom('webhook_endpoints')
    .select('id')
    .where('account_id', '=', r.account)
    .where('disabled_at', 'is', null)
    .where(sql<boolean>`'event.read' = any(events)`)
    .limit(1)
    .executeTakeFirst();
  if (!any) return NOTHING;
  const rows = await sql<{ id: string; key_id: string; payload_json: string | null }>`
    select id, key_id, payload_json from status_events
    where account_id = ${r.account} and id = any(${[...ids]}::text[])`.execute(trx);
  const byId = new Map(rows.rows.map((row) => [row.id, row]));
  const transitions: Transition[] = ids.map((id) => ({
    type: 'event.read',
    account: r.account,
    eventId: id,
    recipient: r.recipient,
    keyId: byId.get(id)?.key_id ?? null,
    at: at.getTime(),
    payloadJson: byId.get(id)?.payload_json ?? null,
  }));
  return enqueueTransitions(trx, transitions, new Set(), queueMax);
}

async function payloadsOf(trx: Kysely<StatusDb>, ids: string[]): Promise<Map<string, string>> {
  if (ids.length === 0) return new Map();
  const rows = await sql<{ id: string; payload_json: string }>`
    select id, payload_json from status_events
    where id = any(${[...new Set(ids)]}::text[]) and payload_json is not null`.execute(trx);
  return new Map(rows.rows.map((r) => [r.id, r.payload_json]));
}
