import { randomUUID } from 'node:crypto';
import { createLogger } from '@herald/kit';
import { NatsRequester } from '@herald/nats';
import { decodeLiveBatch, type LiveBatchMeta, LiveHoldersQuery, subjects } from '@herald/proto';
import { type NatsServer, startNatsServer } from '@herald/testkit';
import { connect, JSONCodec, type NatsConnection, type Subscription } from 'nats';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createLiveBatch, type LiveBatchItem } from '../src/batch/live-batch.js';

const ACCOUNT = '0b6a5d3e-7c41-4f2a-9d0e-1a2b3c4d5e6f';
const json = JSONCodec();
let server: NatsServer;
let nc: NatsConnection;
let edges: NatsConnection;
let subs: Subscription[] = [];

beforeAll(async () => {
  server = await startNatsServer();
  [nc, edges] = await Promise.all([
    connect(server.connectOptions()),
    connect(server.connectOptions()),
  ]);
});
afterEach(() => {
  for (const sub of subs) sub.unsubscribe();
  subs = [];
});
afterAll(async () => {
  await Promise.all([nc?.close(), edges?.close()]);
  await server?.stop();
});

interface FakeEdge {
  id: string;
  /** Every step-2 message this edge received, decoded. */
  batches: { meta: LiveBatchMeta; payloads: string[] }[];
}

/**
 * A stand-in edge on the real server, speaking proto/live-batch.ts: holds `held` recipients, says
 * `edges` edges are alive, answers step 2 with one socket per held recipient (unless `silent`).
 */
async function fakeEdge(opts: {
  held: string[];
  edges: number;
  silent?: 'holders' | 'writes';
}): Promise<FakeEdge> {
  const edge: FakeEdge = { id: randomUUID(), batches: [] };
  subs.push(
    edges.subscribe(subjects.liveHoldersAll, {
      callback: (_err, msg) => {
        if (opts.silent === 'holders') return;
        const query = LiveHoldersQuery.parse(json.decode(msg.data));
        const held = query.recipients.flatMap((r, i) => (opts.held.includes(r) ? [i] : []));
        msg.respond(json.encode({ v: 1, edge: edge.id, edges: opts.edges, held }));
      },
    }),
    edges.subscribe(subjects.edgeLiveAll(edge.id), {
      callback: (_err, msg) => {
        const { meta, payloads } = decodeLiveBatch(msg.data);
        edge.batches.push({ meta, payloads: payloads.map((p) => new TextDecoder().decode(p)) });
        if (opts.silent === 'writes') return;
        const sockets = meta.events.map((e) => (opts.held.includes(e.recipient) ? 1 : 0));
        msg.respond(json.encode({ v: 1, sockets }));
      },
    }),
  );
  await edges.flush();
  return edge;
}

function item(recipient: string, payload = '{"n":1}'): LiveBatchItem {
  return { recipient, id: randomUUID(), ts: 1_700_000_000_000, payload: Buffer.from(payload) };
}

function pusher(timeoutMs = 1000, maxMessageBytes = 1024 * 1024) {
  return createLiveBatch({
    requester: new NatsRequester(nc),
    timeoutMs,
    maxMessageBytes,
    logger: createLogger('ingress-api', 'silent'),
  });
}

describe('a batch pushed live in two messages (real nats-server, stand-in edges)', () => {
  it('with no edge at all, every event is offline at once', async () => {
    const started = Date.now();
    const outcomes = await pusher(5000)(ACCOUNT, [item(randomUUID()), item(randomUUID())]);
    expect(outcomes).toEqual([{ kind: 'offline' }, { kind: 'offline' }]);
    expect(Date.now() - started).toBeLessThan(2500);
  });

  it('sends each edge only its recipients, payloads untouched, and reports sent or offline per event', async () => {
    const [a, b, both, nobody] = [randomUUID(), randomUUID(), randomUUID(), randomUUID()];
    const one = await fakeEdge({ held: [a, both], edges: 2 });
    const two = await fakeEdge({ held: [b, both], edges: 2 });
    const exact = '{ "big": 12345678901234567890123, "txt": "héllo ✓" }';
    const items = [item(a, exact), item(nobody), item(b), item(both), item(a, '{"n":2}')];
    const outcomes = await pusher()(ACCOUNT, items);
    expect(outcomes).toEqual([
      { kind: 'sent', sockets: 1 },
      { kind: 'offline' },
      { kind: 'sent', sockets: 1 },
      { kind: 'sent', sockets: 1 },
      { kind: 'sent', sockets: 1 },
    ]);
    // One message per holding edge, in the batch's order, with ids and ts; nothing for `nobody`.
    expect(one.batches).toHaveLength(1);
    expect(one.batches[0]?.meta.events.map((e) => [e.recipient, e.id, e.ts])).toEqual([
      [a, items[0]?.id, items[0]?.ts],
      [both, items[3]?.id, items[3]?.ts],
      [a, items[4]?.id, items[4]?.ts],
    ]);
    expect(one.batches[0]?.payloads).toEqual([exact, '{"n":1}', '{"n":2}']);
    expect(two.batches[0]?.meta.events.map((e) => e.recipient)).toEqual([b, both]);
  });

  it('an edge that stops answering after step 1 costs a timeout for its events only, within the live budget', async () => {
    const [a, b] = [randomUUID(), randomUUID()];
    await fakeEdge({ held: [a], edges: 2 });
    await fakeEdge({ held: [b], edges: 2, silent: 'writes' });
    const started = Date.now();
    const outcomes = await pusher(600)(ACCOUNT, [item(a), item(b)]);
    expect(outcomes).toEqual([{ kind: 'sent', sockets: 1 }, { kind: 'timeout' }]);
    expect(Date.now() - started).toBeLessThan(1500);
  });

  it('an edge that other edges count but that never answers step 1 is waited for half the budget, then skipped', async () => {
    const [a, b] = [randomUUID(), randomUUID()];
    await fakeEdge({ held: [a], edges: 2 });
    await fakeEdge({ held: [b], edges: 2, silent: 'holders' });
    const started = Date.now();
    const outcomes = await pusher(600)(ACCOUNT, [item(a), item(b)]);
    const took = Date.now() - started;
    // b's edge never said it holds b: b is offline as far as this batch knows (queued, same id).
    expect(outcomes).toEqual([{ kind: 'sent', sockets: 1 }, { kind: 'offline' }]);
    expect(took).toBeGreaterThanOrEqual(290);
    expect(took).toBeLessThan(1500);
  });

  it('stops waiting as soon as every edge it was told of has answered', async () => {
    const a = randomUUID();
    await fakeEdge({ held: [a], edges: 1 });
    const started = Date.now();
    expect(await pusher(4000)(ACCOUNT, [item(a)])).toEqual([{ kind: 'sent', sockets: 1 }]);
    expect(Date.now() - started).toBeLessThan(1000);
  });

  it("splits an edge's events across messages that fit the server's max_payload", async () => {
    const a = randomUUID();
    const edge = await fakeEdge({ held: [a], edges: 1 });
    const payload = JSON.stringify({ pad: 'x'.repeat(300) });
    const items = Array.from({ length: 10 }, () => item(a, payload));
    // Room for about three events per message (1,024 bytes of head room plus 3 × (160 + 312)).
    const outcomes = await pusher(2000, 1024 + 3 * 480)(ACCOUNT, items);
    expect(outcomes.every((o) => o.kind === 'sent')).toBe(true);
    expect(edge.batches.length).toBeGreaterThanOrEqual(4);
    expect(edge.batches.flatMap((b) => b.meta.events.map((e) => e.id))).toEqual(
      items.map((i) => i.id),
    );
    for (const b of edge.batches) expect(b.payloads.every((p) => p === payload)).toBe(true);
  });

  it('splits the question of who holds what when the recipients do not fit one message', async () => {
    const recipients = Array.from({ length: 5 }, () => randomUUID());
    const [, held1, , , held4] = recipients as [string, string, string, string, string];
    await fakeEdge({ held: [held1, held4], edges: 1 });
    // Room for two recipient ids per question: three questions.
    const outcomes = await pusher(2000, 1024 + 2 * 39)(
      ACCOUNT,
      recipients.map((r) => item(r)),
    );
    expect(outcomes.map((o) => o.kind)).toEqual(['offline', 'sent', 'offline', 'offline', 'sent']);
  });
});
