import { randomUUID } from 'node:crypto';
import https from 'node:https';
import { describe, expect, it } from 'vitest';
import { keys, type RunningEdge, type Stack, useEdgeStack } from './fixture.js';

let stack: Stack;
let edge: RunningEdge;

useEdgeStack((started) => {
  ({ stack, edge } = started);
});

const GOOD_HANDSHAKE = {
  Connection: 'Upgrade',
  Upgrade: 'websocket',
  'Sec-WebSocket-Key': 'dGhlIHNhbXBsZSBub25jZQ==',
  'Sec-WebSocket-Version': '13',
};

/** An upgrade request with the given method and headers: the status, Content-Type and body. */
function upgrade(
  method: string,
  headers: Record<string, string>,
  apiKey: string = keys.mobileA,
): Promise<{ status: number; type: string; allow: string | undefined; body: string }> {
  const query = new URLSearchParams({ api_key: apiKey, recipient: randomUUID(), client: 'mobile' });
  return new Promise((resolve, reject) => {
    const req = https.request({
      host: '127.0.0.1',
      port: edge.port,
      path: `/ws/connect?${query}`,
      method,
      headers,
      ca: stack.certs.ca,
    });
    req.on('upgrade', () => reject(new Error('the upgrade was accepted')));
    req.on('error', reject);
    req.on('response', (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => {
        body += c;
      });
      res.on('end', () =>
        resolve({
          status: res.statusCode ?? 0,
          type: res.headers['content-type'] ?? '',
          allow: res.headers.allow,
          body,
        }),
      );
    });
    req.end();
  });
}

describe('malformed WebSocket handshakes are refused in JSON, like every other rejection', () => {
  const cases = [
    {
      name: 'a Sec-WebSocket-Key that is not the base64 of 16 bytes',
      method: 'GET',
      headers: { ...GOOD_HANDSHAKE, 'Sec-WebSocket-Key': 'not-a-key' },
      status: 400,
      code: 'invalid_field',
      field: 'Sec-WebSocket-Key',
    },
    {
      name: 'no Sec-WebSocket-Key',
      method: 'GET',
      headers: { ...GOOD_HANDSHAKE, 'Sec-WebSocket-Key': '' },
      status: 400,
      code: 'invalid_field',
      field: 'Sec-WebSocket-Key',
    },
    {
      name: 'Upgrade: h2c',
      method: 'GET',
      headers: { ...GOOD_HANDSHAKE, Upgrade: 'h2c' },
      status: 400,
      code: 'invalid_field',
      field: 'Upgrade',
    },
    {
      name: 'Sec-WebSocket-Version 8',
      method: 'GET',
      headers: { ...GOOD_HANDSHAKE, 'Sec-WebSocket-Version': '8' },
      status: 400,
      code: 'invalid_field',
      field: 'Sec-WebSocket-Version',
    },
    {
      name: 'a Sec-WebSocket-Protocol that is not a list of tokens',
      method: 'GET',
      headers: { ...GOOD_HANDSHAKE, 'Sec-WebSocket-Protocol': 'herald.v1,,plain' },
      status: 400,
      code: 'invalid_field',
      field: 'Sec-WebSocket-Protocol',
    },
    {
      name: 'a subprotocol offered twice',
      method: 'GET',
      headers: { ...GOOD_HANDSHAKE, 'Sec-WebSocket-Protocol': 'herald.v1, herald.v1' },
      status: 400,
      code: 'invalid_field',
      field: 'Sec-WebSocket-Protocol',
    },
    {
      name: 'a POST upgrade',
      method: 'POST',
      headers: GOOD_HANDSHAKE,
      status: 405,
      code: 'method_not_allowed',
      field: 'method',
    },
    {
      name: 'a bad key from a herald.v1 client (no socket can open to carry an error frame)',
      method: 'GET',
      headers: {
        ...GOOD_HANDSHAKE,
        'Sec-WebSocket-Key': 'short==',
        'Sec-WebSocket-Protocol': 'herald.v1',
      },
      status: 400,
      code: 'invalid_field',
      field: 'Sec-WebSocket-Key',
      apiKey: 'hk_test_unknown',
    },
  ];
  for (const c of cases) {
    it(`${c.name}: ${c.status} ${c.code}`, async () => {
      const res = await upgrade(c.method, c.headers, c.apiKey);
      expect(res.status).toBe(c.status);
      expect(res.type).toBe('application/json');
      const body = JSON.parse(res.body) as { error: { code: string; field?: string } };
      expect(body.error.code).toBe(c.code);
      expect(body.error.field).toBe(c.field);
      expect(res.allow).toBe(c.status === 405 ? 'GET' : undefined);
    });
  }

  it('accepts the same upgrade with an upper-case Upgrade: WebSocket', async () => {
    const upgraded = await new Promise<number>((resolve, reject) => {
      const query = new URLSearchParams({
        api_key: keys.mobileA,
        recipient: randomUUID(),
        client: 'mobile',
      });
      const req = https.request({
        host: '127.0.0.1',
        port: edge.port,
        path: `/ws/connect?${query}`,
        headers: { ...GOOD_HANDSHAKE, Upgrade: 'WebSocket' },
        ca: stack.certs.ca,
      });
      req.on('upgrade', (res, socket) => {
        socket.destroy();
        resolve(res.statusCode ?? 0);
      });
      req.on('response', (res) => reject(new Error(`answered ${res.statusCode}`)));
      req.on('error', reject);
      req.end();
    });
    expect(upgraded).toBe(101);
  });
});
