import { randomBytes } from 'node:crypto';
import { PUSH_API_SUBJECT, subjects } from '@herald/proto';
import { PushService, type TestWebPushSubscription } from '@herald/testkit';
import type { NatsConnection } from 'nats';
import { expect } from 'vitest';
import { type InboxFixture, request, startInboxFixture } from './support.js';

/** A status service whose push sender trusts a test push service, with fast retries. */
export interface PushFixture {
  f: InboxFixture;
  push: PushService;
  auth: NatsConnection;
  ingress: NatsConnection;
  edge: NatsConnection;
  /** The status service's environment (a second instance takes the same). */
  env: Record<string, string>;
  close(): Promise<void>;
}

export const PUSH_ENV = (caFile: string): Record<string, string> => ({
  WEBHOOK_SECRET_KEY: randomBytes(32).toString('base64'),
  PUSH_ALLOW_PRIVATE: 'true',
  PUSH_CA_FILE: caFile,
  PUSH_RETRY_SCHEDULE: '300ms,300ms,300ms,300ms',
  PUSH_POLL_MS: '200',
  PUSH_TIMEOUT_MS: '2000',
  PUSH_VAPID_SUBJECT: 'mailto:ops@herald.test',
});

export async function startPushFixture(env: Record<string, string> = {}): Promise<PushFixture> {
  const push = await PushService.start();
  const all = { ...PUSH_ENV(push.caFile), ...env };
  const f = await startInboxFixture(all);
  const [auth, ingress, edge] = await Promise.all([
    f.client('auth'),
    f.client('ingress-api'),
    f.client('socket-edge'),
  ]);
  return {
    f,
    push,
    auth,
    ingress,
    edge,
    env: all,
    async close() {
      await f.close();
      await push.stop();
    },
  };
}

export const ask = (nc: NatsConnection, body: Record<string, unknown>) =>
  request(nc, PUSH_API_SUBJECT, { v: 1, ...body });

/** Configures the account's VAPID keys and registers one subscription of `recipient`. */
export async function subscribed(
  p: PushFixture,
  account: string,
  recipient: string,
): Promise<{ id: string; sub: TestWebPushSubscription }> {
  const c = await ask(p.auth, { op: 'configure-vapid', account_id: account });
  expect(c.ok, JSON.stringify(c)).toBe(true);
  const sub = p.push.subscribe();
  const r = await ask(p.ingress, {
    op: 'subscribe',
    account_id: account,
    key_id: 'key-1',
    recipient,
    kind: 'webpush',
    subscription: sub,
  });
  expect(r.ok, JSON.stringify(r)).toBe(true);
  return { id: r.id, sub };
}

/** A `pending` record of a push key, as ingress publishes it (alone). */
export function pending(
  p: PushFixture,
  account: string,
  recipient: string,
  id: string,
  push: Record<string, unknown>,
  at = Date.now(),
): void {
  p.ingress.publish(
    subjects.status(account),
    JSON.stringify({
      v: 1,
      id,
      account_id: account,
      key_id: 'key-1',
      recipient,
      status: 'pending',
      at,
      push: { after_ms: 1500, ttl_s: 600, title: 'Hello', ...push },
    }),
  );
}

/** An edge's `delivered` record (no key, no recipient). */
export function delivered(p: PushFixture, account: string, id: string): void {
  p.edge.publish(
    subjects.status(account),
    JSON.stringify({ v: 1, id, account_id: account, status: 'delivered', at: Date.now() }),
  );
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The status service's view of event ids (what /events/status answers). */
export async function statusOf(p: PushFixture, account: string, ids: string[]) {
  const r = await request(p.ingress, subjects.statusQuery, {
    v: 1,
    op: 'ids',
    account_id: account,
    ids,
  });
  expect(r.ok, JSON.stringify(r)).toBe(true);
  return r.events as Array<Record<string, unknown>>;
}
