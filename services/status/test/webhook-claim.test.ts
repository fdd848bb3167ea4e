import { randomBytes } from 'node:crypto';
import { WEBHOOK_API_SUBJECT } from '@herald/proto';
import { sql } from 'kysely';
import type { NatsConnection } from 'nats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { claimDue } from '../src/webhooks/claim.js';
import { enqueue } from '../src/webhooks/outbox.js';
import { type InboxFixture, request, startInboxFixture, uuid } from './support.js';

// The fixture's own sender sends nothing (WEBHOOK_CONCURRENCY=0): these claims are the test's.
let f: InboxFixture;
let auth: NatsConnection;
beforeAll(async () => {
  f = await startInboxFixture({
    WEBHOOK_SECRET_KEY: randomBytes(32).toString('base64'),
    WEBHOOK_CONCURRENCY: '0',
  });
  auth = await f.client('auth');
});
afterAll(async () => {
  await f?.close();
});

const PER_ENDPOINT = 2;
const PREFETCH = 5;
const LEASE_MS = 60_000;

/** An endpoint with `n` messages due. */
async function endpointWith(n: number): Promise<string> {
  const r = await request(auth, WEBHOOK_API_SUBJECT, {
    v: 1,
    op: 'create',
    account_id: uuid(),
    url: 'https://93.184.215.14/hooks',
  });
  const id: string = r.endpoint.id;
  const messages = Array.from({ length: n }, (_, i) => ({
    endpointId: id,
    msgId: `m${i}:${uuid()}`,
    type: 'event.sent',
    body: '{}',
    transitionAt: new Date(),
  }));
  await f.db.transaction().execute((trx) => enqueue(trx, messages, 1000));
  return id;
}

const claim = (worker: string, max = 1000) =>
  claimDue(f.db, { worker, max, perEndpoint: PER_ENDPOINT, prefetch: PREFETCH, leaseMs: LEASE_MS });
const of = (rows: { endpoint_id: string }[], id: string) =>
  rows.filter((r) => r.endpoint_id === id).length;

describe('claimDue: claiming ahead (WEBHOOK_ENDPOINT_PREFETCH)', () => {
  it('leases up to the prefetch per endpoint, counting what the worker already holds', async () => {
    const id = await endpointWith(PREFETCH + 3);
    const a = uuid();
    expect(of(await claim(a), id)).toBe(PREFETCH);
    // At its bound: nothing more until some lease ends.
    expect(of(await claim(a), id)).toBe(0);
    await sql`update webhook_messages set leased_until = null, next_at = now()
      where seq = (select min(seq) from webhook_messages where endpoint_id = ${id})`.execute(f.db);
    expect(of(await claim(a), id)).toBe(1);
  });

  it("keeps another worker off an endpoint while one holds a lease of it, so the endpoint's cap holds", async () => {
    const id = await endpointWith(PREFETCH * 3);
    const [a, b] = [uuid(), uuid()];
    expect(of(await claim(a), id)).toBe(PREFETCH);
    expect(of(await claim(b), id)).toBe(0);
    // The holder's leases end (released, or run out): the other may take the endpoint.
    await sql`update webhook_messages set leased_until = null, next_at = now()
      where endpoint_id = ${id}`.execute(f.db);
    expect(of(await claim(b), id)).toBe(PREFETCH);
  });

  it('leases only WEBHOOK_ENDPOINT_CONCURRENCY of an endpoint that is failing', async () => {
    const id = await endpointWith(PREFETCH * 2);
    await sql`update webhook_endpoints set failing_since = now() where id = ${id}`.execute(f.db);
    expect(of(await claim(uuid()), id)).toBe(PER_ENDPOINT);
  });

  it('takes at most `max` messages over every endpoint (WEBHOOK_CLAIM_BATCH left)', async () => {
    // Two endpoints of PREFETCH each (with what earlier tests left due): more than 3 claimable.
    await endpointWith(PREFETCH);
    await endpointWith(PREFETCH);
    const rows = await claim(uuid(), 3);
    expect(rows).toHaveLength(3);
    expect(await claim(uuid(), 0)).toEqual([]);
  });
});
