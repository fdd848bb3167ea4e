import { randomBytes, randomUUID } from 'node:crypto';
import tls from 'node:tls';
import { openSocket, post, type Stack, startStack } from '@herald/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

// Found by an audit: a plain client that read nothing answered the proof pings by guessing their
// payloads (a counter: p1, p2, …). Every event was answered 200 "sent" though never read, the
// slow-consumer cap never closed the socket, and the edge buffered everything (its memory grew
// from 122 to 201 MB with 1,500 events of 60 KB).

let stack: Stack;
let apiKey: string;

beforeAll(async () => {
  stack = await startStack();
  const { id } = await stack.createAccount();
  apiKey = (await stack.createKey({ account: id, kind: 'test', client: 'mobile' })).key;
}, 120_000);

afterAll(async () => {
  await stack?.stop();
});

/** A masked client frame (RFC 6455 §5.2), payloads under 126 bytes. */
function clientFrame(opcode: number, payload: Buffer): Buffer {
  const mask = randomBytes(4);
  const body = Buffer.from(payload);
  for (let i = 0; i < body.length; i++) body[i] = (body[i] as number) ^ (mask[i % 4] as number);
  return Buffer.concat([Buffer.from([0x80 | opcode, 0x80 | body.length]), mask, body]);
}

/** A plain-framing WebSocket over TLS that stops reading once the handshake is answered. */
function connectWithoutReading(recipient: string): Promise<tls.TLSSocket> {
  const { port } = new URL(stack.wsUrl);
  const path = `/ws/connect?api_key=${apiKey}&recipient=${recipient}&client=mobile`;
  return new Promise((resolve, reject) => {
    const socket = tls.connect({ host: '127.0.0.1', port: Number(port), ca: stack.ca });
    socket.once('error', reject);
    socket.once('secureConnect', () => {
      socket.write(
        `GET ${path} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nUpgrade: websocket\r\n` +
          `Connection: Upgrade\r\nSec-WebSocket-Key: ${randomBytes(16).toString('base64')}\r\n` +
          'Sec-WebSocket-Version: 13\r\n\r\n',
      );
    });
    let head = '';
    const onData = (chunk: Buffer) => {
      head += chunk.toString('latin1');
      if (!head.includes('\r\n\r\n')) return;
      socket.off('data', onData);
      socket.pause();
      if (!head.startsWith('HTTP/1.1 101')) reject(new Error(head.split('\r\n')[0]));
      else resolve(socket);
    };
    socket.on('data', onData);
  });
}

describe('a plain client that reads nothing', () => {
  it('cannot prove receipt by guessing the proof pings: nothing is answered 200, and nothing is lost', async () => {
    const recipient = randomUUID();
    const socket = await connectWithoutReading(recipient);
    // Pongs with every payload the old counter could have had, over and over, without reading.
    const guesses = Array.from({ length: 100 }, (_, i) =>
      clientFrame(0xa, Buffer.from(`p${i + 1}`)),
    );
    const forging = setInterval(() => {
      if (!socket.destroyed) socket.write(Buffer.concat(guesses));
    }, 2);
    const events = 40;
    let statuses: number[];
    try {
      // 40 × 60 KB: more than the 1 MiB of unproven bytes a socket may hold (MAX_UNPROVEN_BYTES).
      const answers = await Promise.all(
        Array.from({ length: events }, (_, i) =>
          post(stack.baseUrl, stack.ca, {
            recipient,
            payload: { i, blob: 'x'.repeat(60_000) },
            api_key: apiKey,
            client: 'mobile',
          }),
        ),
      );
      statuses = answers.map((a) => a.status);
    } finally {
      clearInterval(forging);
      socket.destroy();
    }
    expect(statuses).toEqual(Array.from({ length: events }, () => 202));

    const again = openSocket(stack.wsUrl, stack.ca, { apiKey, recipient, v1: true });
    try {
      await again.waitForFrames(events, 20_000);
      const seen = new Set(again.events().map((e) => (e.payload as { i: number }).i));
      expect(seen.size).toBe(events);
    } finally {
      await again.close();
    }
  }, 60_000);
});
