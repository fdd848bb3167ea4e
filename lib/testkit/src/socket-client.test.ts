import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { WebSocketServer } from 'ws';
import { openSocket, type TestSocket } from './socket-client.js';

// The test socket against a bare `ws` server on 127.0.0.1 that sends exactly the frames a test
// names: what the client records, never what Herald would send.

let server: WebSocketServer | undefined;
let sock: TestSocket | undefined;

afterEach(async () => {
  await sock?.close();
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  server = undefined;
  sock = undefined;
});

/**
 * A server that sends `frames` to each socket; `replies(n)` resolves with the first n frames a
 * socket sent back.
 */
async function serverSending(
  frames: string[],
): Promise<{ url: string; replies: (n: number) => Promise<string[]> }> {
  const received: string[] = [];
  let waiting: { n: number; resolve: (r: string[]) => void } | undefined;
  const wss = new WebSocketServer({ host: '127.0.0.1', port: 0 });
  server = wss;
  wss.on('connection', (ws) => {
    ws.on('message', (data) => {
      received.push(String(data));
      if (waiting && received.length >= waiting.n) waiting.resolve(received.slice(0, waiting.n));
    });
    for (const f of frames) ws.send(f);
  });
  await new Promise<void>((resolve) => wss.once('listening', () => resolve()));
  const replies = (n: number) =>
    new Promise<string[]>((resolve) => {
      if (received.length >= n) resolve(received.slice(0, n));
      else waiting = { n, resolve };
    });
  return { url: `ws://127.0.0.1:${(wss.address() as AddressInfo).port}`, replies };
}

describe('TestSocket', () => {
  it('records a herald.v1 frame that is not JSON in invalidFrames (text cut to 200 chars) instead of throwing, and goes on reading', async () => {
    const garbage = `not json ${'x'.repeat(300)}`;
    const event = (id: string) => JSON.stringify({ type: 'event', id, ts: 1, payload: { id } });
    const { url, replies } = await serverSending([event('e1'), garbage, 'x', event('e2')]);
    sock = openSocket(url, '', { apiKey: 'k', recipient: 'r', v1: true });
    await sock.opened;

    const frames = await sock.waitForFrames(4, 5_000);
    expect(frames.map((f) => f.text)).toEqual([event('e1'), garbage, 'x', event('e2')]);
    expect(sock.invalidFrames.map((f) => f.text)).toEqual([garbage.slice(0, 200), 'x']);
    expect(sock.invalidFrames[0]?.text).toHaveLength(200);
    expect(sock.events().map((e) => e.id)).toEqual(['e1', 'e2']);
    // Both events were acked: the bad frames in between stopped nothing.
    expect((await replies(2)).map((r) => JSON.parse(r) as unknown)).toEqual([
      { type: 'ack', id: 'e1' },
      { type: 'ack', id: 'e2' },
    ]);
  });

  it('keeps invalidFrames empty when every herald.v1 frame is JSON', async () => {
    const { url } = await serverSending([JSON.stringify({ type: 'welcome', id: 'w', ts: 1 })]);
    sock = openSocket(url, '', { apiKey: 'k', recipient: 'r', v1: true });
    await sock.waitForFrames(1, 5_000);
    expect(sock.frames[0]?.envelope?.type).toBe('welcome');
    expect(sock.invalidFrames).toEqual([]);
  });
});
