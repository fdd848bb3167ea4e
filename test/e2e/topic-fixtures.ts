import { randomUUID } from 'node:crypto';
import { request, type Stack } from '@herald/testkit';
import type { JetStreamManager, NatsConnection } from 'nats';
import type { Tenant } from './fixtures.js';

/** `n` fresh recipients, sorted (a topic lists and snapshots its members in this order). */
export const recipients = (n: number): string[] =>
  Array.from({ length: n }, () => randomUUID()).sort();

/** A topic route on the stack's ingress: `method` `/topics/{topic}{rest}` with a JSON body. */
export function topicCall(
  stack: Stack,
  method: 'PUT' | 'DELETE' | 'GET' | 'OPTIONS',
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
) {
  return request(method, new URL(path, stack.baseUrl).toString(), stack.ca, body, headers);
}

export function putMembers(stack: Stack, tenant: Tenant, topic: string, members: string[]) {
  return topicCall(stack, 'PUT', `/topics/${topic}/members`, {
    api_key: tenant.key.key,
    recipients: members,
  });
}

/** Every member of a topic, read page by page. */
export async function listAll(stack: Stack, tenant: Tenant, topic: string): Promise<string[]> {
  const out: string[] = [];
  let cursor: string | null = null;
  do {
    const q = new URLSearchParams({ api_key: tenant.key.key });
    if (cursor) q.set('cursor', cursor);
    const res = await topicCall(stack, 'GET', `/topics/${topic}/members?${q}`);
    if (res.status !== 200) throw new Error(`list: ${res.status} ${res.text}`);
    out.push(...res.body.recipients);
    cursor = res.body.next_cursor;
  } while (cursor);
  return out;
}

export function notifyTopic(
  stack: Stack,
  tenant: Tenant,
  topic: string,
  extra = {},
  headers: Record<string, string> = {},
) {
  return request(
    'POST',
    new URL('/notify', stack.baseUrl).toString(),
    stack.ca,
    {
      topic,
      payload: { hello: topic },
      api_key: tenant.key.key,
      client: tenant.key.client,
      ...extra,
    },
    headers,
  );
}

/** The topic event's view through the status service (works while ingress is down). */
export async function topicStatus(
  nc: NatsConnection,
  tenant: Tenant,
  id: string,
): Promise<{ members: number; sent: number; pending: number; delivered: number; failed: number }> {
  const msg = await nc.request(
    'rt.statusapi.query',
    JSON.stringify({ v: 1, op: 'ids', account_id: tenant.account, ids: [id] }),
    { timeout: 10_000 },
  );
  const reply = JSON.parse(new TextDecoder().decode(msg.data));
  return reply.events[0].topic;
}

/** How many messages each of the account's recipients has stored in the queue (by subject). */
export async function queuedPerRecipient(
  jsm: JetStreamManager,
  account: string,
): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  for await (const name of jsm.streams.names()) {
    if (!name.startsWith('HERALD_QUEUE_')) continue;
    const info = await jsm.streams.info(name, { subjects_filter: `rt.queue.*.${account}.*` });
    for (const [subject, n] of Object.entries(info.state.subjects ?? {})) {
      const recipient = subject.split('.')[4] as string;
      out.set(recipient, (out.get(recipient) ?? 0) + n);
    }
  }
  return out;
}
