import tls from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openClient, type RunningEdge, type Stack, startEdge, startStack } from './fixture.js';

let stack: Stack;
let edge: RunningEdge;
beforeAll(async () => {
  stack = await startStack();
  edge = await startEdge(stack, { HTTP_REQUEST_TIMEOUT_MS: '500', HTTP_HEADERS_TIMEOUT_MS: '500' });
});
afterAll(async () => {
  await edge?.close();
  await edge?.nc.close();
  await stack?.stop();
});

describe('a WebSocket upgrade that stops half-way', () => {
  it('is cut off with 408 by the header timeout, and others still connect', async () => {
    const socket = tls.connect({
      host: '127.0.0.1',
      port: edge.port,
      ca: stack.certs.ca,
      servername: 'localhost',
    });
    let received = '';
    socket.setEncoding('utf8');
    socket.on('data', (c: string) => {
      received += c;
    });
    socket.on('error', () => {});
    const closed = new Promise<void>((resolve) => socket.on('close', () => resolve()));
    await new Promise<void>((resolve) => socket.once('secureConnect', () => resolve()));
    // The headers never end (no blank line).
    socket.write(
      'GET /ws/connect?client=mobile HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n',
    );
    await closed;
    expect(received).toMatch(/^HTTP\/1\.1 408 /);
    const client = openClient(stack, edge.port);
    await client.opened;
    client.ws.close();
  });
});
