import { randomUUID } from 'node:crypto';
import { TurnPublisher } from '@herald/nats';
import { STATUS_BATCH_RECORDS_MAX, StatusBatch, StatusEvent, subjects } from '@herald/proto';
import { StatusBatcher } from '@herald/status-client';
import { type NatsServer, startNatsServer } from '@herald/testkit';
import { connect, type Msg, type NatsConnection } from 'nats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

let server: NatsServer;
let nc: NatsConnection;
let sub: NatsConnection;

beforeAll(async () => {
  server = await startNatsServer();
  [nc, sub] = await Promise.all([
    connect(server.connectOptions()),
    connect(server.connectOptions()),
  ]);
});
afterAll(async () => {
  await Promise.all([nc?.close(), sub?.close()]);
  await server?.stop();
});

const record = (account: string, i: number, extra: Partial<StatusEvent> = {}): StatusEvent => ({
  v: 1,
  id: `ev-${i}`,
  account_id: account,
  key_id: 'key-1',
  recipient: 'r-1',
  status: 'pending',
  at: 1_700_000_000_000 + i,
  ...extra,
});

/**
 * Adds `records` in one synchronous run (one event-loop turn) through a batcher on ingress's
 * TurnPublisher, and returns the messages the server delivered on the accounts' subjects, each
 * with its payload's size, its form and its records: a message of one record is a StatusEvent, one
 * of more a StatusBatch (each parsed with its schema).
 */
async function publishTurn(
  accounts: string[],
  records: StatusEvent[],
  limits?: { maxRecords: number; maxBytes: number },
): Promise<
  Array<{ subject: string; bytes: number; form: 'single' | 'batch'; records: StatusEvent[] }>
> {
  const got: Msg[] = [];
  const subs = accounts.map((a) =>
    sub.subscribe(subjects.status(a), { callback: (_e, m) => got.push(m) }),
  );
  await sub.flush();
  const batcher = new StatusBatcher(new TurnPublisher(nc), limits);
  for (const r of records) batcher.add(r);
  // The turn publisher hands the turn's messages to nats.js at the turn's end.
  await new Promise((r) => setImmediate(r));
  await nc.flush();
  await sub.flush();
  for (const s of subs) s.unsubscribe();
  return got.map((m) => {
    const body: unknown = JSON.parse(m.string());
    const batch = StatusBatch.safeParse(body);
    return batch.success
      ? { subject: m.subject, bytes: m.data.length, form: 'batch', records: batch.data.records }
      : {
          subject: m.subject,
          bytes: m.data.length,
          form: 'single',
          records: [StatusEvent.parse(body)],
        };
  });
}

describe('StatusBatcher (real nats-server)', () => {
  it("sends a turn's records as one StatusBatch message per account, in order", async () => {
    const [a, b] = [randomUUID(), randomUUID()];
    const records = [record(a, 1), record(b, 2), record(a, 3), record(a, 4, { status: 'sent' })];
    const msgs = await publishTurn([a, b], records);
    expect(msgs).toHaveLength(2);
    const ofA = msgs.find((m) => m.subject === subjects.status(a));
    const ofB = msgs.find((m) => m.subject === subjects.status(b));
    expect(ofA?.records).toEqual([records[0], records[2], records[3]]);
    expect(ofA?.form).toBe('batch');
    expect(ofB?.records).toEqual([records[1]]);
  });

  it("sends a turn's lone record in the single-record form, byte for byte its JSON", async () => {
    const a = randomUUID();
    const lone = record(a, 1);
    const msgs = await publishTurn([a], [lone]);
    expect(msgs).toEqual([
      {
        subject: subjects.status(a),
        bytes: Buffer.byteLength(JSON.stringify(lone)),
        form: 'single',
        records: [lone],
      },
    ]);
  });

  it('records a delivery as a `delivered` record of the recipient, stamped now', async () => {
    const a = randomUUID();
    const got: Msg[] = [];
    const s = sub.subscribe(subjects.status(a), { callback: (_e, m) => got.push(m) });
    await sub.flush();
    const before = Date.now();
    new StatusBatcher(new TurnPublisher(nc)).delivered(a, 'r-9', 'ev-9');
    await new Promise((r) => setImmediate(r));
    await nc.flush();
    await sub.flush();
    s.unsubscribe();
    expect(got).toHaveLength(1);
    const rec = StatusEvent.parse(JSON.parse(got[0]?.string() ?? ''));
    expect(rec).toEqual({
      v: 1,
      id: 'ev-9',
      account_id: a,
      recipient: 'r-9',
      status: 'delivered',
      at: rec.at,
    });
    expect(rec.at).toBeGreaterThanOrEqual(before);
    expect(rec.at).toBeLessThanOrEqual(Date.now());
  });

  it('names the proving device on a `delivered` record when the socket had one', async () => {
    const a = randomUUID();
    const got: Msg[] = [];
    const s = sub.subscribe(subjects.status(a), { callback: (_e, m) => got.push(m) });
    await sub.flush();
    new StatusBatcher(new TurnPublisher(nc)).delivered(a, 'r-9', 'ev-9', 'phone-1');
    await new Promise((r) => setImmediate(r));
    await nc.flush();
    await sub.flush();
    s.unsubscribe();
    expect(got).toHaveLength(1);
    expect(StatusEvent.parse(JSON.parse(got[0]?.string() ?? ''))).toMatchObject({
      id: 'ev-9',
      status: 'delivered',
      device: 'phone-1',
    });
  });

  it("sends a record added alone in a message of its own, the account's batch kept open around it", async () => {
    const a = randomUUID();
    const got: Msg[] = [];
    const s = sub.subscribe(subjects.status(a), { callback: (_e, m) => got.push(m) });
    await sub.flush();
    const batcher = new StatusBatcher(new TurnPublisher(nc));
    const alone = record(a, 2, { status: 'sent', payload_json: '{"title":"hi"}' });
    batcher.add(record(a, 1));
    batcher.addAlone(a, JSON.stringify(alone));
    batcher.add(record(a, 3));
    await new Promise((r) => setImmediate(r));
    await nc.flush();
    await sub.flush();
    s.unsubscribe();
    expect(got.map((m) => JSON.parse(m.string()))).toEqual([
      { v: 1, records: [record(a, 1), record(a, 3)] },
      alone,
    ]);
  });

  it("takes the turn's place of its first record among the turn publisher's messages", async () => {
    const a = randomUUID();
    const got: string[] = [];
    const s = sub.subscribe(`rt.*.${a}`, { callback: (_e, m) => got.push(m.subject) });
    await sub.flush();
    const turn = new TurnPublisher(nc);
    const batcher = new StatusBatcher(turn);
    turn.publish(`rt.before.${a}`, 'x');
    batcher.add(record(a, 1));
    turn.publish(`rt.after.${a}`, 'y');
    // Joins the message already placed, after the publish that followed the first record.
    batcher.add(record(a, 2));
    await new Promise((r) => setImmediate(r));
    await nc.flush();
    await sub.flush();
    s.unsubscribe();
    expect(got).toEqual([`rt.before.${a}`, subjects.status(a), `rt.after.${a}`]);
  });

  it('puts maxRecords in one message and the next record in a second', async () => {
    const a = randomUUID();
    const at = await publishTurn(
      [a],
      Array.from({ length: 5 }, (_, i) => record(a, i)),
      { maxRecords: 5, maxBytes: 1_000_000 },
    );
    expect(at.map((m) => m.records.length)).toEqual([5]);
    const over = await publishTurn(
      [a],
      Array.from({ length: 6 }, (_, i) => record(a, i)),
      { maxRecords: 5, maxBytes: 1_000_000 },
    );
    expect(over.map((m) => m.records.length)).toEqual([5, 1]);
    expect(over.flatMap((m) => m.records.map((r) => r.id))).toEqual(
      Array.from({ length: 6 }, (_, i) => `ev-${i}`),
    );
  });

  it('fills a message up to exactly maxBytes, and starts another one byte past it', async () => {
    const a = randomUUID();
    const records = Array.from({ length: 3 }, (_, i) => record(a, i));
    // What three records weigh in one message, measured on the wire.
    const [whole] = await publishTurn([a], records);
    const exact = whole?.bytes ?? 0;
    expect(exact).toBe(Buffer.byteLength(JSON.stringify({ v: 1, records })));
    const at = await publishTurn([a], records, { maxRecords: 100, maxBytes: exact });
    expect(at.map((m) => m.records.length)).toEqual([3]);
    expect(at[0]?.bytes).toBe(exact);
    const under = await publishTurn([a], records, { maxRecords: 100, maxBytes: exact - 1 });
    expect(under.map((m) => m.records.length)).toEqual([2, 1]);
    for (const m of under) expect(m.bytes).toBeLessThanOrEqual(exact - 1);
  });

  it('sends a record larger than maxBytes alone rather than dropping it', async () => {
    const a = randomUUID();
    const big = record(a, 1, { recipient: 'x'.repeat(2000) });
    const msgs = await publishTurn([a], [record(a, 0), big, record(a, 2)], {
      maxRecords: 100,
      maxBytes: 1024,
    });
    expect(msgs.map((m) => m.records.map((r) => r.id))).toEqual([['ev-0'], ['ev-1'], ['ev-2']]);
  });

  it('takes maxRecords 1..STATUS_BATCH_RECORDS_MAX, what the writer takes in one message', () => {
    const publisher = new TurnPublisher(nc);
    expect(() => new StatusBatcher(publisher, { maxRecords: 1, maxBytes: 1 })).not.toThrow();
    expect(
      () =>
        new StatusBatcher(publisher, { maxRecords: STATUS_BATCH_RECORDS_MAX, maxBytes: 65_536 }),
    ).not.toThrow();
    expect(() => new StatusBatcher(publisher, { maxRecords: 0, maxBytes: 65_536 })).toThrow(
      RangeError,
    );
    expect(
      () =>
        new StatusBatcher(publisher, {
          maxRecords: STATUS_BATCH_RECORDS_MAX + 1,
          maxBytes: 65_536,
        }),
    ).toThrow(RangeError);
  });
});
