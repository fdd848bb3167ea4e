import { randomUUID } from 'node:crypto';
import type { Socket } from 'node:net';
import { subjects } from '@herald/proto';
import { queueStreamOf } from '@herald/queue';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ACCOUNT_A,
  type ConnectOptions,
  consumerInfo,
  openClient,
  queueEvent,
  type RunningEdge,
  type Stack,
  sendLive,
  startEdge,
  startStack,
  type TestClient,
  waitUntil,
} from './fixture.js';

// Issue 10, findings A and B: an event answered 200 or 202 is delivered to the recipient at least
// once, or is still stored. Each test plays the phone whose network silently died: a client that
// opens its socket, never reads another byte (so it answers neither pings nor events), and drops.

let stack: Stack;

beforeAll(async () => {
  stack = await startStack();
});

afterAll(async () => {
  await stack?.stop();
});

/**
 * A client whose TCP socket stops reading as soon as the WebSocket is open: only a really full
 * window makes anything pile up, which is the condition under test. Paused on open because ws
 * resumes the socket when it takes it over after the upgrade.
 */
function openNeverReading(edge: RunningEdge, opts: ConnectOptions): TestClient {
  const client = openClient(stack, edge.port, { ...opts, autoAck: false });
  let tcp: Socket | undefined;
  client.ws.once('upgrade', (res) => {
    tcp = res.socket as Socket;
  });
  client.ws.once('open', () => tcp?.pause());
  return client;
}

/** The `n` of every frame a client received, in order (plain payloads or herald.v1 envelopes). */
function numbers(client: TestClient, v1: boolean): number[] {
  return v1
    ? client.events.map((e) => (e.payload as { n: number }).n)
    : client.frames.map((f) => (JSON.parse(f) as { n: number }).n);
}

function summary(received: number[]): { distinct: number; duplicates: number } {
  const distinct = new Set(received).size;
  return { distinct, duplicates: received.length - distinct };
}

/**
 * Queues `count` events of ~1 KiB for a new recipient, opens a never-reading socket for them and
 * waits until the drain has written to it: the drain is then stalled on a full window.
 */
async function stalledDrain(
  edge: RunningEdge,
  count: number,
): Promise<{ recipient: string; silent: TestClient }> {
  const recipient = randomUUID();
  const pad = 'x'.repeat(1024);
  for (let n = 0; n < count; n++) {
    await queueEvent(stack, ACCOUNT_A, recipient, `{"n":${n},"pad":"${pad}"}`);
  }
  const silent = openNeverReading(edge, { recipient });
  await silent.opened;
  // The drain writes until the socket's unproven events or bytes are half their caps, then waits.
  await waitUntil(
    'the drain to write to the silent socket',
    async () => ((await consumerInfo(stack, ACCOUNT_A, recipient))?.delivered.stream_seq ?? 0) > 0,
  );
  return { recipient, silent };
}

/** A live push's answer, or 'unanswered' once its request timed out. */
/** A live request's answer when no socket of the recipient can prove the event: ingress queues it. */
const NOT_SENT = { v: 1, sockets: 0 };

function unansweredOr<T>(reply: Promise<T>): Promise<T | 'unanswered'> {
  return reply.catch(() => 'unanswered' as const);
}

const storedFor = async (recipient: string): Promise<number> => {
  const info = await stack.jsm.streams.info(queueStreamOf(ACCOUNT_A, recipient), {
    subjects_filter: subjects.queue(ACCOUNT_A, recipient),
  });
  return Object.values(info.state.subjects ?? {}).reduce((a, b) => a + b, 0);
};

describe('finding A: plain framing acks a queued event only on proof of receipt', () => {
  it('delivers all 2,000 queued events after a never-reading client dropped', async () => {
    const edge = await startEdge(stack);
    try {
      const COUNT = 2000;
      const { recipient, silent } = await stalledDrain(edge, COUNT);
      silent.ws.terminate();
      await silent.closed;

      const reader = openClient(stack, edge.port, { recipient });
      await waitUntil(
        'every queued event on the reconnect',
        () => new Set(numbers(reader, false)).size >= COUNT,
        60_000,
      );
      const received = numbers(reader, false);
      const { distinct, duplicates } = summary(received);
      console.info(
        `finding A: ${distinct}/${COUNT} queued events arrived after the reconnect, ${duplicates} duplicates`,
      );
      expect(distinct).toBe(COUNT);
      expect(received).toEqual([...received].sort((a, b) => a - b));
      reader.ws.close();
    } finally {
      await edge.close();
    }
  }, 120_000);
});

describe('stream order when a socket is replaced', () => {
  // A phone reconnects before the edge noticed its old socket die: the new socket joins the
  // session that still holds the old one, mid-drain. The old socket's unproven events must reach
  // the new one first, not be nakked behind newer events the drain went on writing.
  it('writes the queued events still unproven to a socket that joins, oldest first', async () => {
    const edge = await startEdge(stack);
    try {
      const COUNT = 1000;
      const { recipient, silent } = await stalledDrain(edge, COUNT);
      const reader = openClient(stack, edge.port, { recipient });
      // Both sockets are in the session now; the drain paces to the silent one, which has no room.
      await reader.opened;
      silent.ws.terminate();
      await silent.closed;
      await waitUntil(
        'every queued event on the new socket',
        () => new Set(numbers(reader, false)).size >= COUNT,
        60_000,
      );
      const received = numbers(reader, false);
      expect(new Set(received).size).toBe(COUNT);
      expect(received).toEqual([...received].sort((a, b) => a - b));
      expect(received[0]).toBe(0);
      reader.ws.close();
    } finally {
      await edge.close();
    }
  }, 120_000);
});

describe('finding B: a live event is answered "sent" only once a socket proved receipt', () => {
  for (const v1 of [true, false]) {
    const framing = v1 ? 'herald.v1' : 'plain';
    it(`answers none of the live events a never-reading ${framing} client was written, and stores none: their sender keeps them`, async () => {
      const edge = await startEdge(stack);
      try {
        const recipient = randomUUID();
        const COUNT = 50;
        const silent = openNeverReading(edge, { recipient, v1 });
        await silent.opened;
        // Written to the socket (the frames fit in the kernel buffers), never proven: no answer,
        // so ingress queues each one itself once its LIVE_TIMEOUT_MS has passed. An answer here
        // would be a 200 that a crash of this edge could make untrue.
        const answers = await Promise.all(
          Array.from({ length: COUNT }, (_, n) =>
            sendLive(stack.nc, ACCOUNT_A, recipient, `{"n":${n}}`, randomUUID(), 1500).then(
              (reply) => reply,
              () => 'unanswered',
            ),
          ),
        );
        expect(answers).toEqual(Array.from({ length: COUNT }, () => 'unanswered'));
        silent.ws.terminate();
        await silent.closed;
        // The edge stores nothing of its own: what the sender queued is the only copy.
        expect(await storedFor(recipient)).toBe(0);
      } finally {
        await edge.close();
      }
    }, 60_000);
  }

  it('answers a herald.v1 event at its ack, not at its write, and a plain one at the pong', async () => {
    const edge = await startEdge(stack);
    try {
      const recipient = randomUUID();
      const mute = openClient(stack, edge.port, { recipient, v1: true, autoAck: false });
      await mute.opened;
      const id = randomUUID();
      let answered: unknown;
      const reply = sendLive(stack.nc, ACCOUNT_A, recipient, '{"n":0}', id, 10_000).then((r) => {
        answered = r;
        return r;
      });
      await waitUntil('the event on the socket', () => mute.events.length === 1);
      // Read, not acked: a round trip to the edge and back leaves it unanswered.
      await stack.nc.flush();
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(answered).toBeUndefined();
      mute.ack(id);
      expect(await reply).toEqual({ v: 1, sockets: 1 });

      const plainRecipient = randomUUID();
      const plain = openClient(stack, edge.port, { recipient: plainRecipient });
      await plain.opened;
      expect(await sendLive(stack.nc, ACCOUNT_A, plainRecipient, '{"n":1}')).toEqual({
        v: 1,
        sockets: 1,
      });
      mute.ws.close();
      plain.ws.close();
    } finally {
      await edge.close();
    }
  });
});

describe('slow consumers: the cap counts what is written and not proven', () => {
  it('takes MAX_UNPROVEN_EVENTS unacked events, closes with 1013 on the next, and answers none of them', async () => {
    const edge = await startEdge(stack, { MAX_UNPROVEN_EVENTS: '10' });
    try {
      const recipient = randomUUID();
      // Reads every frame (so the kernels hold nothing) but never acks.
      const mute = openClient(stack, edge.port, { recipient, v1: true, autoAck: false });
      await mute.opened;
      const answers = Array.from({ length: 10 }, (_, n) =>
        unansweredOr(sendLive(stack.nc, ACCOUNT_A, recipient, `{"n":${n}}`, randomUUID(), 3000)),
      );
      await waitUntil('the ten events', () => mute.events.length === 10);
      expect(mute.ws.readyState).toBe(mute.ws.OPEN);
      // The eleventh is refused: the socket is closed and the event is answered 0, not sent
      // (ingress then queues it at once).
      expect(await sendLive(stack.nc, ACCOUNT_A, recipient, '{"n":10}', randomUUID(), 500)).toEqual(
        NOT_SENT,
      );
      expect(await mute.closed).toEqual({ code: 1013, reason: 'slow consumer' });
      // None of the ten was proven, so none was answered "sent": each is answered 0 as its socket
      // closes, and ingress queues every one.
      expect(await Promise.all(answers)).toEqual(Array.from({ length: 10 }, () => NOT_SENT));
    } finally {
      await edge.close();
    }
  });

  it('takes MAX_UNPROVEN_BYTES of unproven plain frames exactly, and closes with 1013 beyond', async () => {
    const edge = await startEdge(stack, { MAX_UNPROVEN_BYTES: '1024' });
    try {
      const recipient = randomUUID();
      // Reads frames but answers no ping: nothing it receives is ever proven.
      const mute = openClient(stack, edge.port, { recipient, autoPong: false });
      await mute.opened;
      // Plain frames are the payload bytes: four of 256 bytes fill the cap exactly.
      const payload = (n: number) => `{"n":${n},"pad":"${'x'.repeat(256 - 16)}"}`;
      expect(Buffer.byteLength(payload(0))).toBe(256);
      const answers = Array.from({ length: 4 }, (_, n) =>
        unansweredOr(sendLive(stack.nc, ACCOUNT_A, recipient, payload(n), randomUUID(), 3000)),
      );
      await waitUntil('the four frames', () => mute.frames.length === 4);
      expect(mute.ws.readyState).toBe(mute.ws.OPEN);
      expect(await sendLive(stack.nc, ACCOUNT_A, recipient, payload(4), randomUUID(), 500)).toEqual(
        NOT_SENT,
      );
      expect(await mute.closed).toEqual({ code: 1013, reason: 'slow consumer' });
      expect(await Promise.all(answers)).toEqual(Array.from({ length: 4 }, () => NOT_SENT));
    } finally {
      await edge.close();
    }
  });
});
