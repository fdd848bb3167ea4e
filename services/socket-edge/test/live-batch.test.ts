import { randomUUID } from 'node:crypto';
import {
  encodeLiveBatch,
  LiveBatchReply,
  type LiveHoldersReply,
  LiveHoldersReply as LiveHoldersReplySchema,
  subjects,
} from '@herald/proto';
import { createInbox, JSONCodec } from 'nats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ACCOUNT_A,
  ACCOUNT_B,
  keys,
  openClient,
  type RunningEdge,
  type Stack,
  sleep,
  startEdge,
  startStack,
  waitUntil,
} from './fixture.js';

const json = JSONCodec();
const FAST_HEARTBEATS = { EDGE_ALIVE_INTERVAL_MS: '100', EDGE_ALIVE_TIMEOUT_MS: '1000' };

let stack: Stack;
let one: RunningEdge;
let two: RunningEdge;

beforeAll(async () => {
  stack = await startStack();
  [one, two] = await Promise.all([
    startEdge(stack, FAST_HEARTBEATS),
    startEdge(stack, FAST_HEARTBEATS),
  ]);
});

afterAll(async () => {
  await Promise.all([one?.close(), two?.close()]);
  await stack?.stop();
});

/** Step 1 as ingress sends it: every edge's answer within `ms`. */
async function askHolders(account: string, recipients: string[], ms = 500) {
  const inbox = createInbox();
  const answers: LiveHoldersReply[] = [];
  const sub = stack.nc.subscribe(inbox, {
    callback: (_err, msg) => answers.push(LiveHoldersReplySchema.parse(json.decode(msg.data))),
  });
  stack.nc.publish(subjects.liveHolders(account), json.encode({ v: 1, recipients }), {
    reply: inbox,
  });
  await sleep(ms);
  sub.unsubscribe();
  return answers;
}

/** Step 2 as ingress sends it, to one edge: its answer. */
async function writeBatch(
  edge: RunningEdge,
  account: string,
  events: { recipient: string; payload: string; id?: string }[],
) {
  const withIds = events.map((e) => ({ ...e, id: e.id ?? randomUUID(), ts: 1_700_000_000_000 }));
  const data = encodeLiveBatch(
    {
      v: 1,
      reply_within_ms: 1000,
      events: withIds.map(({ recipient, id, ts, payload }) => ({
        recipient,
        id,
        ts,
        bytes: Buffer.byteLength(payload),
      })),
    },
    withIds.map((e) => Buffer.from(e.payload)),
  );
  const reply = await stack.nc.request(subjects.edgeLive(edge.edge.id, account), data, {
    timeout: 3000,
  });
  return { ids: withIds.map((e) => e.id), reply: LiveBatchReply.parse(json.decode(reply.data)) };
}

describe("a batch's live push, edge side (two edges, real nats-server)", () => {
  it('every edge says which recipients it holds, its id, and that two edges are alive', async () => {
    const [a, b, both, nobody] = [randomUUID(), randomUUID(), randomUUID(), randomUUID()];
    const clients = [
      openClient(stack, one.port, { recipient: a }),
      openClient(stack, two.port, { recipient: b }),
      openClient(stack, one.port, { recipient: both }),
      openClient(stack, two.port, { recipient: both }),
    ];
    await Promise.all(clients.map((c) => c.opened));
    // Each edge learns of the other from its heartbeats.
    let answers: LiveHoldersReply[] = [];
    await waitUntil('both edges counting two', async () => {
      answers = await askHolders(ACCOUNT_A, [a, b, both, nobody]);
      return answers.length === 2 && answers.every((x) => x.edges === 2);
    });
    const byEdge = new Map(answers.map((x) => [x.edge, x.held]));
    expect(byEdge.get(one.edge.id)).toEqual([0, 2]);
    expect(byEdge.get(two.edge.id)).toEqual([1, 2]);
    // Another account's question finds none of account A's recipients.
    const other = await askHolders(ACCOUNT_B, [a, b, both]);
    expect(other.map((x) => x.held)).toEqual([[], []]);
    for (const c of clients) c.ws.close();
  });

  it('writes each event to every socket of its recipient on this edge, payload bytes untouched, and answers per event', async () => {
    const [plain, v1, nobody] = [randomUUID(), randomUUID(), randomUUID()];
    const plainTab = openClient(stack, one.port, { recipient: plain });
    const plainTab2 = openClient(stack, one.port, { recipient: plain });
    const v1Tab = openClient(stack, one.port, { recipient: v1, v1: true });
    const elsewhere = openClient(stack, two.port, { recipient: v1, v1: true });
    await Promise.all([plainTab, plainTab2, v1Tab, elsewhere].map((c) => c.opened));
    const exact = '{ "z": 1, "big": 12345678901234567890123, "txt": "héllo ✓" }';
    const { ids, reply } = await writeBatch(one, ACCOUNT_A, [
      { recipient: plain, payload: exact },
      { recipient: nobody, payload: '{"n":0}' },
      { recipient: v1, payload: '{"n":1}' },
      { recipient: plain, payload: '{"n":2}' },
    ]);
    expect(reply.sockets).toEqual([2, 0, 1, 2]);
    await waitUntil('the frames', () => plainTab2.frames.length === 2 && v1Tab.events.length === 1);
    expect(plainTab.frames).toEqual([exact, '{"n":2}']);
    expect(plainTab2.frames).toEqual([exact, '{"n":2}']);
    expect(v1Tab.events[0]).toMatchObject({ id: ids[2], ts: 1_700_000_000_000, payload: { n: 1 } });
    // Step 2 went to edge one only: the recipient's socket on edge two is ingress's to reach.
    await sleep(100);
    expect(elsewhere.frames).toEqual([]);
    for (const c of [plainTab, plainTab2, v1Tab, elsewhere]) c.ws.close();
  });

  it("never writes to another account's socket: a batch for account B finds account A's recipient held by nobody", async () => {
    const recipient = randomUUID();
    const tab = openClient(stack, one.port, { recipient, apiKey: keys.mobileA });
    await tab.opened;
    const { reply } = await writeBatch(one, ACCOUNT_B, [{ recipient, payload: '{"n":1}' }]);
    expect(reply.sockets).toEqual([0]);
    await sleep(100);
    expect(tab.frames).toEqual([]);
    tab.ws.close();
  });

  it('ignores a malformed batch (no answer, nothing written) and keeps serving', async () => {
    const recipient = randomUUID();
    const tab = openClient(stack, one.port, { recipient });
    await tab.opened;
    const bad = Buffer.from(
      `{"v":1,"reply_within_ms":100,"events":[{"recipient":"${recipient}","id":"x","ts":1,"bytes":50}]}\n{}`,
    );
    await expect(
      stack.nc.request(subjects.edgeLive(one.edge.id, ACCOUNT_A), bad, { timeout: 300 }),
    ).rejects.toThrow();
    expect(tab.frames).toEqual([]);
    const { reply } = await writeBatch(one, ACCOUNT_A, [{ recipient, payload: '{"ok":1}' }]);
    expect(reply.sockets).toEqual([1]);
    await waitUntil('the good frame', () => tab.frames.length === 1);
    expect(tab.frames).toEqual(['{"ok":1}']);
    tab.ws.close();
  });
});
