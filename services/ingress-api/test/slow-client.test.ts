import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type IngressFixture,
  newRecipient,
  notifyBody,
  startIngressFixture,
} from './support/fixture.js';
import { request } from './support/http.js';

let fx: IngressFixture;
beforeAll(async () => {
  fx = await startIngressFixture({
    HTTP_REQUEST_TIMEOUT_MS: '500',
    HTTP_HEADERS_TIMEOUT_MS: '500',
  });
});
afterAll(async () => {
  await fx?.stop();
});

describe('a client that stops sending', () => {
  it('has its half-sent body (13 of 1000 bytes) cut off with 408 by the request timeout', async () => {
    const { port } = new URL(fx.baseUrl);
    const socket = net.connect(Number(port), '127.0.0.1');
    let received = '';
    socket.setEncoding('utf8');
    socket.on('data', (c: string) => {
      received += c;
    });
    socket.on('error', () => {});
    const closed = new Promise<void>((resolve) => socket.on('close', () => resolve()));
    socket.write(
      'POST /notify HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"recipient":',
    );
    // Before the fix the connection stayed open for 300 s, far past the test's timeout.
    await closed;
    expect(received).toMatch(/^HTTP\/1\.1 408 /);
    // The listener still serves everyone else.
    expect((await request(fx.baseUrl, { body: notifyBody(newRecipient()) })).status).toBe(202);
  });
});
