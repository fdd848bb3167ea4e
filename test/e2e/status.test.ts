import { randomUUID } from 'node:crypto';
import { STATUS_BATCH_RECORDS_MAX } from '@herald/proto';
import { get, post } from '@herald/testkit';
import { type NatsConnection, connect as natsConnect } from 'nats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  eventually,
  newTenant,
  notify,
  recipient,
  runRetentionOnce,
  type Tenant,
  useStack,
} from './fixtures.js';

const IDS_MAX = 5;
/** A small stream ceiling per recipient, so a test can get a 507 (an event that failed). */
const QUEUE_CAP = 20;

/**
 * The status pipeline on the whole stack: ingress and the edge publish status records, the status
 * service writes them to Postgres, and senders read them back with POST /events/status.
 */
describe('delivery status', () => {
  const stack = useStack({
    services: ['auth', 'ingress-api', 'socket-edge', 'status'],
    env: {
      'ingress-api': {
        STATUS_IDS_MAX: String(IDS_MAX),
        QUEUE_MAX_PER_RECIPIENT: String(QUEUE_CAP),
      },
      // Room for the held-back test below: its `delivered` waits for a record published after it.
      status: { STATUS_ORPHAN_RETRIES: '100' },
    },
  });
  let nc: NatsConnection;
  beforeAll(async () => {
    nc = await natsConnect(stack().nats.connectOptions());
  });
  afterAll(async () => {
    await nc?.close();
  });

  const lookup = (tenant: Tenant, ids: string[]) =>
    post(stack().baseUrl, stack().ca, { api_key: tenant.key.key, ids }, { path: '/events/status' });

  async function query(q: Record<string, unknown>) {
    const msg = await nc.request('rt.statusapi.query', JSON.stringify({ v: 1, ...q }), {
      timeout: 10_000,
    });
    return JSON.parse(new TextDecoder().decode(msg.data));
  }

  async function statuses(tenant: Tenant, ids: string[]): Promise<string[]> {
    const out: string[] = [];
    for (let i = 0; i < ids.length; i += IDS_MAX) {
      const res = await lookup(tenant, ids.slice(i, i + IDS_MAX));
      expect(res.status).toBe(200);
      out.push(...res.body.events.map((e: { status: string }) => e.status));
    }
    return out;
  }

  it('reconciles its counts with what /notify answered, then records each delivery once', async () => {
    const s = stack();
    const tenant = await newTenant(s);
    const online = recipient();
    const offline = recipient();
    const live = await connectV1(online, tenant);
    const answers: Array<{ id: string; status: number }> = [];
    for (let i = 0; i < 24; i++) {
      const res = await notify(s, tenant, i % 3 === 0 ? online : offline, { n: i });
      expect([200, 202]).toContain(res.status);
      answers.push({ id: res.body.id, status: res.status });
    }
    const ids = answers.map((a) => a.id);
    const told = answers.map((a) => (a.status === 200 ? 'sent' : 'pending'));
    await eventually(
      async () => JSON.stringify(await statuses(tenant, ids)) === JSON.stringify(told),
      'every event recorded with the status /notify answered',
      30_000,
    );
    const sentCount = told.filter((t) => t === 'sent').length;
    const pendingCount = told.length - sentCount;
    const counts = await query({
      op: 'counts',
      account_id: tenant.account,
      key_id: tenant.key.id,
      window: 'hour',
    });
    expect(counts.counts).toEqual({
      sent: sentCount,
      pending: pendingCount,
      delivered: 0,
      failed: 0,
    });
    // The series adds up to the same counts.
    const total = counts.series.reduce((n: number, b: { pending: number }) => n + b.pending, 0);
    expect(total).toBe(pendingCount);

    const late = await connectV1(offline, tenant);
    await late.waitForFrames(pendingCount, 30_000);
    const after = told.map((t) => (t === 'pending' ? 'delivered' : 'sent'));
    await eventually(
      async () => JSON.stringify(await statuses(tenant, ids)) === JSON.stringify(after),
      'every queued event delivered',
      30_000,
    );
    const final = await query({
      op: 'counts',
      account_id: tenant.account,
      key_id: tenant.key.id,
      window: 'day',
    });
    expect(final.counts).toEqual({
      sent: sentCount,
      pending: pendingCount,
      delivered: pendingCount,
      failed: 0,
    });
    const one = await lookup(tenant, [ids[1] as string]);
    expect(one.body.events[0]).toMatchObject({
      id: ids[1],
      status: 'delivered',
      recipient: offline,
      queued_at: expect.any(String),
      delivered_at: expect.any(String),
    });
    const byRecipient = await query({
      op: 'recent',
      account_id: tenant.account,
      recipient: offline,
      limit: 100,
    });
    expect(byRecipient.events).toHaveLength(pendingCount);
    await live.close();
    await late.close();
  });

  it('counts a refused store as failed, with its reason, beside what was queued', async () => {
    const s = stack();
    const tenant = await newTenant(s);
    const to = recipient();
    const answers: number[] = [];
    for (let i = 0; i <= QUEUE_CAP; i++) answers.push((await notify(s, tenant, to, { i })).status);
    expect(answers.filter((st) => st === 202)).toHaveLength(QUEUE_CAP);
    expect(answers.at(-1)).toBe(507);
    await eventually(
      async () => {
        const c = await query({ op: 'counts', account_id: tenant.account, window: 'hour' });
        return c.counts?.pending === QUEUE_CAP && c.counts?.failed === 1;
      },
      'the 202s counted pending and the 507 failed',
      30_000,
    );
    const recent = await query({
      op: 'recent',
      account_id: tenant.account,
      recipient: to,
      limit: 50,
    });
    const failed = recent.events.filter((e: { status: string }) => e.status === 'failed');
    expect(failed).toEqual([
      expect.objectContaining({ reason: 'queue_full', failed_at: expect.any(String) }),
    ]);
  });

  it('never shows an event to another account, and answers unknown for ids it never saw', async () => {
    const s = stack();
    const a = await newTenant(s);
    const b = await newTenant(s);
    const res = await notify(s, a, recipient(), { secret: true });
    expect(res.status).toBe(202);
    const id = res.body.id as string;
    await eventually(
      async () => (await statuses(a, [id]))[0] === 'pending',
      'the event recorded for its own account',
      30_000,
    );
    const other = await lookup(b, [id, randomUUID()]);
    expect(other.status).toBe(200);
    expect(other.body.events.map((e: { status: string }) => e.status)).toEqual([
      'unknown',
      'unknown',
    ]);
    expect(JSON.stringify(other.body)).not.toContain(a.account);
    const recent = await query({ op: 'recent', account_id: b.account, limit: 200 });
    expect(recent.events.map((e: { id: string }) => e.id)).not.toContain(id);
  });

  it('takes at most STATUS_IDS_MAX ids and names the field of every refusal', async () => {
    const s = stack();
    const tenant = await newTenant(s);
    const ids = Array.from({ length: IDS_MAX }, () => randomUUID());
    const atLimit = await lookup(tenant, ids);
    expect(atLimit.status).toBe(200);
    expect(atLimit.body.events).toHaveLength(IDS_MAX);
    const over = await lookup(tenant, [...ids, randomUUID()]);
    expect(over.status).toBe(400);
    expect(over.body.error).toMatchObject({ code: 'invalid_field', field: 'ids' });
    const noKey = await post(s.baseUrl, s.ca, { ids }, { path: '/events/status' });
    expect(noKey.status).toBe(401);
    expect(noKey.body.error.field).toBe('api_key');
    const badKey = await post(
      s.baseUrl,
      s.ca,
      { api_key: 'hk_test_nope', ids },
      { path: '/events/status' },
    );
    expect(badKey.status).toBe(401);
  });

  it('writes records in batches while the writer was down, each transition once', async () => {
    const s = stack();
    const account = randomUUID();
    const key = randomUUID();
    const n = 3000;
    await s.stopService('status');
    const at = Date.now();
    for (let i = 0; i < n; i++) {
      const record = {
        v: 1,
        id: `load-${account}-${i}`,
        account_id: account,
        key_id: key,
        recipient: randomUUID(),
        status: 'pending',
        at,
      };
      // Each record twice: a redelivered or repeated record must not count again.
      nc.publish(`rt.status.${account}`, JSON.stringify(record));
      nc.publish(`rt.status.${account}`, JSON.stringify(record));
    }
    await nc.flush();
    await s.startService('status');
    await eventually(
      async () =>
        (await query({ op: 'counts', account_id: account, window: 'hour' })).counts?.pending === n,
      'every record written',
      60_000,
    );
    const counts = await query({ op: 'counts', account_id: account, window: 'hour' });
    expect(counts.counts.pending).toBe(n);
    // The restarted process counts from 0: 6000 records in batches of up to STATUS_BATCH_MAX (1000).
    const batches = await metric('herald_status_batches_total');
    expect(batches).toBeGreaterThan(0);
    // At least 30 records per transaction on average, however loaded the machine.
    expect(batches).toBeLessThanOrEqual(200);
  });

  /** A status record as a producer publishes it. */
  const rec = (account: string, id: string, extra: Record<string, unknown> = {}) => ({
    v: 1,
    id,
    account_id: account,
    key_id: 'k-batch',
    recipient: 'r-batch',
    status: 'pending',
    at: Date.now(),
    ...extra,
  });
  const publishBatch = (account: string, records: unknown[]) =>
    nc.publish(`rt.status.${account}`, JSON.stringify({ v: 1, records }));
  const countsOf = async (account: string, keyId?: string) =>
    (
      await query({
        op: 'counts',
        account_id: account,
        window: 'hour',
        ...(keyId ? { key_id: keyId } : {}),
      })
    ).counts;

  it('writes StatusBatch messages beside single records, each transition once', async () => {
    const account = randomUUID();
    const batched = Array.from({ length: 50 }, (_, i) => rec(account, `b-${i}-${account}`));
    publishBatch(account, batched);
    // The form every producer used before batches: still read (rolling deploys).
    for (let i = 0; i < 10; i++) {
      nc.publish(`rt.status.${account}`, JSON.stringify(rec(account, `s-${i}-${account}`)));
    }
    // The same batch again (a producer's repeat or a redelivery) counts nothing more.
    publishBatch(account, batched);
    // `delivered` as the edge sends it: no key, counted under the key of the event's record.
    publishBatch(
      account,
      batched.slice(0, 10).map((r) => ({
        v: 1,
        id: r.id,
        account_id: account,
        recipient: 'r-batch',
        status: 'delivered',
        at: Date.now(),
      })),
    );
    await nc.flush();
    await eventually(
      async () => (await countsOf(account))?.delivered === 10,
      'the batches and the single records written',
      30_000,
    );
    expect(await countsOf(account, 'k-batch')).toEqual({
      sent: 0,
      pending: 60,
      delivered: 10,
      failed: 0,
    });
  });

  it('drops the bad records of a batch and writes its good ones; refuses a batch past the bound', async () => {
    const account = randomUUID();
    const invalidBefore = await metric('herald_status_records_invalid_total');
    // Past the bound the message is refused whole (one invalid message), never written in part.
    publishBatch(
      account,
      Array.from({ length: STATUS_BATCH_RECORDS_MAX + 1 }, (_, i) => rec(account, `over-${i}`)),
    );
    publishBatch(account, [
      rec(account, `good-1-${account}`),
      rec(account, 'no-status', { status: 'lost' }),
      { v: 1, account_id: account, status: 'pending', at: Date.now() },
      rec(account, `good-2-${account}`, { status: 'sent' }),
      'not a record',
      rec(account, 'v2', { v: 2 }),
      // Valid JSON that Postgres would refuse: dropped here, never a transaction failing forever.
      rec(account, 'nul-\u0000-id'),
      rec(account, `far-future-${account}`, { at: 8_640_000_000_000_001 }),
    ]);
    // At the bound: every record written.
    publishBatch(
      account,
      Array.from({ length: STATUS_BATCH_RECORDS_MAX }, (_, i) =>
        rec(account, `edge-${i}-${account}`, { status: 'failed', reason: 'queue_full' }),
      ),
    );
    await nc.flush();
    await eventually(
      async () => (await countsOf(account))?.failed === STATUS_BATCH_RECORDS_MAX,
      'the batch at the bound written',
      30_000,
    );
    // The stream is read in order: what came before the last batch has been read too.
    expect(await countsOf(account)).toEqual({
      sent: 1,
      pending: 1,
      delivered: 0,
      failed: STATUS_BATCH_RECORDS_MAX,
    });
    const recent = await query({ op: 'recent', account_id: account, limit: 10 });
    expect(recent.events.map((e: { id: string }) => e.id)).not.toContain('over-0');
    expect(await metric('herald_status_records_invalid_total')).toBe(invalidBefore + 7);
  });

  it('nakks a batch whose delivered record is held back, and counts its other records once', async () => {
    const account = randomUUID();
    const sentId = `sent-${account}`;
    const lateId = `late-${account}`;
    // The edge's `delivered` of an event whose own record has not come yet, beside a good record.
    publishBatch(account, [
      rec(account, sentId, { status: 'sent' }),
      { v: 1, id: lateId, account_id: account, status: 'delivered', at: Date.now() },
    ]);
    await nc.flush();
    await eventually(
      async () => (await statusOfId(account, sentId)) === 'sent',
      'the good record of the batch written',
      30_000,
    );
    nc.publish(`rt.status.${account}`, JSON.stringify(rec(account, lateId)));
    await nc.flush();
    await eventually(
      async () => (await statusOfId(account, lateId)) === 'delivered',
      'the held-back record written once its event has a key',
      30_000,
    );
    // Under the event's key (it waited for it), and the batch's `sent`, written again each time
    // the batch came back, counted once.
    expect(await countsOf(account, 'k-batch')).toEqual({
      sent: 1,
      pending: 1,
      delivered: 1,
      failed: 0,
    });
  });

  async function statusOfId(account: string, id: string): Promise<string | undefined> {
    const res = await query({ op: 'ids', account_id: account, ids: [id] });
    return res.events?.[0]?.status;
  }

  it("trims rows older than its window at the end of retention's run", async () => {
    const s = stack();
    const account = randomUUID();
    const old = Date.now() - 40 * 24 * 3600_000;
    const recent = Date.now();
    for (const [id, at] of [
      ['trim-old', old],
      ['trim-new', recent],
    ] as const) {
      nc.publish(
        `rt.status.${account}`,
        JSON.stringify({
          v: 1,
          id: `${id}-${account}`,
          account_id: account,
          key_id: 'k',
          status: 'sent',
          at,
        }),
      );
    }
    await eventually(
      async () =>
        (await query({ op: 'recent', account_id: account, limit: 10 })).events.length === 2,
      'both records written',
      30_000,
    );
    // Age the old event's row the way time would: only the database knows when it was first seen.
    const pg = await import('pg');
    const client = new pg.default.Client({ connectionString: s.databaseUrl });
    await client.connect();
    await client.query(
      `update status_events set created_at = now() - interval '40 days' where id = $1`,
      [`trim-old-${account}`],
    );
    await client.end();
    // Retention's weekly run ends by asking the status service to trim: run one pass now.
    expect(await runRetentionOnce(s)).toMatchObject({ outcome: 'completed' });
    const left = await query({ op: 'recent', account_id: account, limit: 10 });
    expect(left.events.map((e: { id: string }) => e.id)).toEqual([`trim-new-${account}`]);
    const counts = await query({ op: 'counts', account_id: account, window: 'hour' });
    expect(counts.counts.sent).toBe(1);
  });

  it('serves /metrics and the named checks on its loopback ops listener only', async () => {
    const publicPort = `https://127.0.0.1:${stack().ports.status}`;
    expect((await get(publicPort, stack().ca, '/metrics')).status).toBe(404);
    const ready = await get(publicPort, stack().ca, '/readyz');
    expect(ready.status).toBe(200);
    expect(ready.text).not.toContain('postgres');
    const ops = await fetch(`http://127.0.0.1:${stack().opsPorts.status}/readyz`);
    expect(await ops.json()).toEqual({ status: 'ready', checks: { nats: true, postgres: true } });
  });

  async function metric(name: string): Promise<number> {
    // /metrics is on the loopback ops listener (plain HTTP), not the service's TLS port.
    const res = {
      text: await (await fetch(`http://127.0.0.1:${stack().opsPorts.status}/metrics`)).text(),
    };
    // Default labels may follow the name: `name{service="status"} 6`.
    const line = res.text
      .split('\n')
      .find((l) => l.startsWith(`${name} `) || l.startsWith(`${name}{`));
    return Number(line?.split(' ').at(-1) ?? 0);
  }

  async function connectV1(to: string, tenant: Tenant) {
    const { connect } = await import('./fixtures.js');
    return connect(stack(), { apiKey: tenant.key.key, recipient: to, v1: true });
  }
});
