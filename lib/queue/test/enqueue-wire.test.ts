import { randomUUID } from 'node:crypto';
import { EventMsgHdrs, NatsRequester, TurnPublisher } from '@herald/nats';
import { EventHeaders, recipientSubjects, subjects } from '@herald/proto';
import { type NatsServer, startNatsServer } from '@herald/testkit';
import { connect, type Msg, type NatsConnection } from 'nats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { enqueue, type QueuedEvent } from '../src/publish.js';
import { QueueLayout } from '../src/queue-layout.js';
import { ensureQueueStream } from '../src/queue-stream.js';

const ACCOUNT = '0b6a5d3e-7c41-4f2a-9d0e-1a2b3c4d5e6f';
let server: NatsServer;
let nc: NatsConnection;
let peer: NatsConnection;
const layout = new QueueLayout(4);

beforeAll(async () => {
  server = await startNatsServer();
  [nc, peer] = await Promise.all([
    connect(server.connectOptions()),
    connect(server.connectOptions()),
  ]);
  await ensureQueueStream(await nc.jetstreamManager(), { layout });
});
afterAll(async () => {
  await Promise.all([nc?.close(), peer?.close()]);
  await server?.stop();
});

/** What the stream stored under `subject`, as raw bytes and header text. */
async function stored(subject: string, stream: string) {
  const jsm = await nc.jetstreamManager();
  const m = await jsm.streams.getMessage(stream, { last_by_subj: subject });
  return { data: Buffer.from(m.data), headers: m.header.toString() };
}

/**
 * The store and the `rt.queued` notice, once with the subjects built by enqueue and once with
 * `recipientSubjects` handed in (as ingress's deliver does): the same subjects, stored bytes,
 * headers and notice bytes, and the notice's bytes are the ones a string payload encoded with
 * TextEncoder had (nats.js's encoding of the old `JSON.stringify` payload).
 */
describe('enqueue wire (real nats-server with JetStream)', () => {
  it('stores and announces the same bytes with and without precomputed subjects', async () => {
    const publisher = new TurnPublisher(nc);
    const requester = new NatsRequester(nc, { publisher });
    const notices: Msg[] = [];
    const sub = peer.subscribe('rt.queued.>', { callback: (_e, m) => notices.push(m) });
    await peer.flush();
    const seen: { data: Buffer; headers: string }[] = [];
    // One recipient (one stream and subject), two events: each is the last stored when read.
    const recipient = randomUUID();
    for (const precomputed of [false, true]) {
      const id = randomUUID();
      const names = recipientSubjects(ACCOUNT, recipient);
      const stream = layout.streamOf(ACCOUNT, recipient);
      expect(layout.streamOfSlot(names.slot)).toBe(stream);
      const headers = new EventMsgHdrs()
        .add(EventHeaders.id, id)
        .add(EventHeaders.ts, '1700000000000');
      const queued: QueuedEvent = {
        account: ACCOUNT,
        recipient,
        id,
        payload: new TextEncoder().encode('{"hello":"wörld"}'),
        headers,
        msgId: `${ACCOUNT}:k-${id}`,
        stream,
        subjects: precomputed ? names : undefined,
      };
      const outcome = await enqueue(publisher, requester, queued, 2_000);
      expect(outcome).toMatchObject({ kind: 'stored', duplicate: false });
      const got = await stored(subjects.queue(ACCOUNT, recipient), stream);
      seen.push({
        data: got.data,
        headers: got.headers.replaceAll(id, '<id>').replaceAll(`k-${id}`, '<k>'),
      });
      await peer.flush();
      await nc.flush();
      await new Promise((r) => setTimeout(r, 50));
      const notice = notices.find(
        (m) => m.subject === subjects.queued(ACCOUNT, recipient) && m.string().includes(id),
      );
      expect(notice).toBeDefined();
      expect(Buffer.from(notice?.data ?? [])).toEqual(
        Buffer.from(new TextEncoder().encode(JSON.stringify({ v: 1, id }))),
      );
    }
    expect(seen[1]).toEqual(seen[0]);
    expect(seen[0]?.data.toString()).toBe('{"hello":"wörld"}');
    sub.unsubscribe();
  });
});
