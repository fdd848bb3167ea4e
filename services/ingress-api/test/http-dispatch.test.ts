import http from 'node:http';
import { DispatchStatus, EventHeaders, type QueuedNotice, subjects } from '@herald/proto';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { ACCOUNT_A, ACCOUNT_B, KEYS, WEB_ORIGIN } from './support/auth-responder.js';
import {
  edgeStandIn,
  type IngressFixture,
  newRecipient,
  notifyBody,
  queuedMessages,
  settle,
  startIngressFixture,
} from './support/fixture.js';
import { request } from './support/http.js';

// Small limits so the edges are cheap to reach: payload 1024 bytes, body 1024 + 512.
const PAYLOAD_LIMIT = 1024;
const BODY_LIMIT = PAYLOAD_LIMIT + 512;

let fx: IngressFixture;
beforeAll(async () => {
  fx = await startIngressFixture({
    PAYLOAD_LIMIT_BYTES: String(PAYLOAD_LIMIT),
    BODY_OVERHEAD_BYTES: '512',
    LIVE_TIMEOUT_MS: '300',
  });
});
afterAll(async () => {
  await fx?.stop();
});

const post = (body: unknown, headers: Record<string, string> = {}, path = '/notify') =>
  request(fx.baseUrl, { path, body, headers });

describe('bad input is refused with the field at fault', () => {
  const r = '3f0c9e4a-1b2c-4d5e-8f90-a1b2c3d4e5f6';
  const without = (field: string) => {
    const body = notifyBody(r);
    delete body[field];
    return body;
  };
  const cases: Array<[string, unknown, number, string, string]> = [
    ['recipient missing', without('recipient'), 400, 'missing_field', 'recipient'],
    ['payload missing', without('payload'), 400, 'missing_field', 'payload'],
    ['api_key missing', without('api_key'), 401, 'missing_api_key', 'api_key'],
    ['client missing', without('client'), 400, 'missing_field', 'client'],
    [
      'recipient UUID v1',
      notifyBody('6ba7b810-9dad-11d1-80b4-00c04fd430c8'),
      400,
      'invalid_recipient',
      'recipient',
    ],
    [
      'recipient UUID v3',
      notifyBody('6fa459ea-ee8a-3ca4-894e-db77e160355e'),
      400,
      'invalid_recipient',
      'recipient',
    ],
    [
      'recipient UUID v5',
      notifyBody('886313e1-3b8a-5372-9b90-0c9aee199e5d'),
      400,
      'invalid_recipient',
      'recipient',
    ],
    [
      'recipient nil UUID',
      notifyBody('00000000-0000-0000-0000-000000000000'),
      400,
      'invalid_recipient',
      'recipient',
    ],
    [
      'recipient variant c',
      notifyBody('3f0c9e4a-1b2c-4d5e-cf90-a1b2c3d4e5f6'),
      400,
      'invalid_recipient',
      'recipient',
    ],
    [
      'recipient variant 7',
      notifyBody('3f0c9e4a-1b2c-4d5e-7f90-a1b2c3d4e5f6'),
      400,
      'invalid_recipient',
      'recipient',
    ],
    [
      'recipient one char short',
      notifyBody('3f0c9e4a-1b2c-4d5e-8f90-a1b2c3d4e5f'),
      400,
      'invalid_recipient',
      'recipient',
    ],
    [
      'recipient one char long',
      notifyBody('3f0c9e4a-1b2c-4d5e-8f90-a1b2c3d4e5f60'),
      400,
      'invalid_recipient',
      'recipient',
    ],
    ['recipient garbage', notifyBody('not-a-uuid'), 400, 'invalid_recipient', 'recipient'],
    [
      'recipient a number',
      notifyBody(r, { recipient: 12345 }),
      400,
      'invalid_recipient',
      'recipient',
    ],
    [
      'recipient an object',
      notifyBody(r, { recipient: { id: r } }),
      400,
      'invalid_recipient',
      'recipient',
    ],
    ['client desktop', notifyBody(r, { client: 'desktop' }), 400, 'invalid_client', 'client'],
    ['client upper case', notifyBody(r, { client: 'WEB' }), 400, 'invalid_client', 'client'],
    ['client not a string', notifyBody(r, { client: 1 }), 400, 'invalid_client', 'client'],
    // A key of the wrong type is an invalid key (401), never a malformed request (400).
    ['api_key empty', notifyBody(r, { api_key: '' }), 401, 'invalid_api_key', 'api_key'],
    ['api_key a number', notifyBody(r, { api_key: 42 }), 401, 'invalid_api_key', 'api_key'],
    [
      'api_key an array',
      notifyBody(r, { api_key: [KEYS.mobile] }),
      401,
      'invalid_api_key',
      'api_key',
    ],
    ['api_key null', notifyBody(r, { api_key: null }), 401, 'invalid_api_key', 'api_key'],
    [
      'api_key malformed',
      notifyBody(r, { api_key: 'password' }),
      401,
      'invalid_api_key',
      'api_key',
    ],
    ['body not JSON', '{"recipient": oops}', 400, 'invalid_json', 'body'],
    ['body empty', '', 400, 'invalid_json', 'body'],
    ['body a JSON array', JSON.stringify([notifyBody(r)]), 400, 'invalid_json', 'body'],
    ['body a JSON string', '"hello"', 400, 'invalid_json', 'body'],
    ['body JSON null', 'null', 400, 'invalid_json', 'body'],
    ['unknown key', notifyBody(r, { api_key: KEYS.unknown }), 401, 'invalid_api_key', 'api_key'],
    ['revoked key', notifyBody(r, { api_key: KEYS.revoked }), 401, 'key_revoked', 'api_key'],
    [
      'key past its expiry',
      notifyBody(r, { api_key: KEYS.expired }),
      401,
      'key_expired',
      'api_key',
    ],
    [
      'key expired per auth',
      notifyBody(r, { api_key: KEYS.expiredAtAuth }),
      401,
      'key_expired',
      'api_key',
    ],
    ['mobile key sent as web', notifyBody(r, { client: 'web' }), 403, 'client_mismatch', 'client'],
    [
      'web key sent as mobile',
      notifyBody(r, { api_key: KEYS.web }),
      403,
      'client_mismatch',
      'client',
    ],
    [
      'web key without Origin',
      notifyBody(r, { api_key: KEYS.web, client: 'web' }),
      403,
      'origin_mismatch',
      'Origin',
    ],
  ];
  it.each(cases)('%s', async (_name, body, status, code, field) => {
    const res = await post(body);
    expect(res.status).toBe(status);
    expect(res.json.error.code).toBe(code);
    expect(res.json.error.field).toBe(field);
    expect(res.json.error.message).toMatch(/\w+/);
  });

  it('web key with another Origin is 403 origin_mismatch', async () => {
    const res = await post(notifyBody(r, { api_key: KEYS.web, client: 'web' }), {
      origin: 'https://evil.example',
    });
    expect(res.status).toBe(403);
    expect(res.json.error).toMatchObject({ code: 'origin_mismatch', field: 'Origin' });
  });

  it('web key with its registered Origin is accepted', async () => {
    const res = await post(notifyBody(newRecipient(), { api_key: KEYS.web, client: 'web' }), {
      origin: WEB_ORIGIN,
    });
    expect(res.status).toBe(202);
    expect(res.json.status).toBe(DispatchStatus.queued);
  });

  it.each([
    ['text/plain', 'text/plain'],
    ['form encoded', 'application/x-www-form-urlencoded'],
    ['json with a latin-1 charset', 'application/json; charset=iso-8859-1'],
  ])('Content-Type %s is 400 unsupported_content_type', async (_name, type) => {
    const res = await post(notifyBody(r), { 'content-type': type });
    expect(res.status).toBe(400);
    expect(res.json.error).toMatchObject({
      code: 'unsupported_content_type',
      field: 'Content-Type',
    });
  });

  it('Content-Type application/json with charset utf-8 is accepted', async () => {
    const res = await post(notifyBody(newRecipient()), {
      'content-type': 'Application/JSON; charset="UTF-8"',
    });
    expect(res.status).toBe(202);
  });

  it('a compressed body is 400 unsupported_content_type naming Content-Encoding', async () => {
    const res = await post(notifyBody(r), { 'content-encoding': 'gzip' });
    expect(res.status).toBe(400);
    expect(res.json.error).toMatchObject({
      code: 'unsupported_content_type',
      field: 'Content-Encoding',
    });
  });

  it('a body that is not UTF-8 is 400 invalid_json', async () => {
    const bytes = Buffer.concat([
      Buffer.from(`{"recipient":"${r}","payload":"`),
      Buffer.from([0xff, 0xfe]),
      Buffer.from('"}'),
    ]);
    const res = await post(bytes);
    expect(res.status).toBe(400);
    expect(res.json.error).toMatchObject({ code: 'invalid_json', field: 'body' });
  });

  it.each([
    ['256 characters', 'k'.repeat(256)],
    ['a space', 'has space'],
    ['non-ASCII', 'clé'],
    ['empty', ''],
  ])('Idempotency-Key with %s is 400 invalid_field', async (_name, value) => {
    const res = await post(notifyBody(r), { 'idempotency-key': value });
    expect(res.status).toBe(400);
    expect(res.json.error).toMatchObject({ code: 'invalid_field', field: 'Idempotency-Key' });
  });
});

describe('size limits', () => {
  it('accepts a payload of exactly PAYLOAD_LIMIT_BYTES (UTF-8 bytes, not characters)', async () => {
    // 511 two-byte characters plus the quotes: 1024 bytes of JSON text.
    const payload = 'é'.repeat(511);
    expect(Buffer.byteLength(JSON.stringify(payload))).toBe(PAYLOAD_LIMIT);
    const res = await post(notifyBody(newRecipient(), { payload }));
    expect(res.status).toBe(202);
  });

  it('refuses a payload one byte over with 413 payload_too_large naming the limit', async () => {
    const payload = `${'é'.repeat(511)}a`;
    const res = await post(notifyBody(newRecipient(), { payload }));
    expect(res.status).toBe(413);
    expect(res.json.error).toMatchObject({ code: 'payload_too_large', field: 'payload' });
    expect(res.json.error.message).toContain(String(PAYLOAD_LIMIT));
  });

  it('keeps the connection after a payload over the limit (the body was read whole)', async () => {
    const agent = new http.Agent({ keepAlive: true });
    try {
      const payload = `${'é'.repeat(511)}a`;
      const res = await request(fx.baseUrl, {
        body: notifyBody(newRecipient(), { payload }),
        agent,
      });
      expect(res.status).toBe(413);
      expect(res.headers.connection).toBe('keep-alive');
    } finally {
      agent.destroy();
    }
  });

  it('refuses a body over PAYLOAD_LIMIT_BYTES + BODY_OVERHEAD_BYTES with 413 before reading it', async () => {
    const res = await post(notifyBody(newRecipient(), { padding: 'x'.repeat(BODY_LIMIT) }));
    expect(res.status).toBe(413);
    expect(res.json.error).toMatchObject({ code: 'payload_too_large', field: 'body' });
    expect(res.json.error.message).toContain(String(BODY_LIMIT));
  });

  it('closes the connection after a body over the limit, even on a keep-alive one', async () => {
    const agent = new http.Agent({ keepAlive: true });
    try {
      const body = notifyBody(newRecipient(), { padding: 'x'.repeat(BODY_LIMIT) });
      const res = await request(fx.baseUrl, { body, agent });
      expect(res.status).toBe(413);
      expect(res.headers.connection).toBe('close');
    } finally {
      agent.destroy();
    }
  });

  it('refuses an oversized chunked body (no Content-Length) with 413 too', async () => {
    const body = JSON.stringify(notifyBody(newRecipient(), { padding: 'x'.repeat(BODY_LIMIT) }));
    const res = await request(fx.baseUrl, {
      body,
      headers: { 'content-length': undefined, 'transfer-encoding': 'chunked' },
    });
    expect(res.status).toBe(413);
    expect(res.json.error.code).toBe('payload_too_large');
  });
});

describe('live push', () => {
  it('answers 200 sent when an edge replies, and the edge gets the payload bytes as sent', async () => {
    const recipient = newRecipient();
    const edge = edgeStandIn(fx.peer, recipient);
    await fx.peer.flush();
    const payloadText =
      '{ "n": 123456789012345678901234567890,\n  "s": "é\\u00e9", "list": [1.50, {"deep": null}] }';
    const raw = `{"recipient":"${recipient}","api_key":"${KEYS.mobile}","client":"mobile","payload":${payloadText}}`;
    const before = Date.now();
    const res = await post(raw);
    const after = Date.now();
    edge.stop();
    expect(res.status).toBe(200);
    expect(res.json).toEqual({ status: DispatchStatus.sent, id: expect.any(String) });
    expect(edge.received).toHaveLength(1);
    const got = edge.received[0];
    expect(Buffer.from(got?.data ?? []).equals(Buffer.from(payloadText, 'utf8'))).toBe(true);
    expect(got?.id).toBe(res.json.id);
    expect(Number(got?.ts)).toBeGreaterThanOrEqual(before);
    expect(Number(got?.ts)).toBeLessThanOrEqual(after);
    expect(await queuedMessages(fx.jsm, recipient)).toHaveLength(0);
  });

  it('serves /bff_v001/notify identically, and routes an upper-case recipient to its lower-case subject', async () => {
    const recipient = newRecipient();
    const edge = edgeStandIn(fx.peer, recipient);
    await fx.peer.flush();
    const res = await post(notifyBody(recipient.toUpperCase()), {}, '/bff_v001/notify');
    edge.stop();
    expect(res.status).toBe(200);
    expect(res.json.status).toBe(DispatchStatus.sent);
    expect(edge.received).toHaveLength(1);
  });

  it('queues when the edge does not answer within LIVE_TIMEOUT_MS, with the same id (at-least-once)', async () => {
    const recipient = newRecipient();
    const edge = edgeStandIn(fx.peer, recipient, { reply: false });
    await fx.peer.flush();
    const res = await post(notifyBody(recipient));
    edge.stop();
    expect(res.status).toBe(202);
    expect(edge.received.map((d) => d.id)).toEqual([res.json.id]);
    const stored = await queuedMessages(fx.jsm, recipient);
    expect(stored.map((m) => m.header.get(EventHeaders.id))).toEqual([res.json.id]);
  });
});

describe('offline', () => {
  it('answers 202, stores the payload bytes on the queue subject with the id, and announces it', async () => {
    const recipient = newRecipient();
    const notices: QueuedNotice[] = [];
    const sub = fx.peer.subscribe(subjects.queued(ACCOUNT_A, recipient), {
      callback: (_err, msg) => notices.push(JSON.parse(new TextDecoder().decode(msg.data))),
    });
    await fx.peer.flush();
    const payloadText = '[123456789012345678901234567890, "x"]';
    const res = await post(
      `{"payload":${payloadText},"recipient":"${recipient}","api_key":"${KEYS.mobile}","client":"mobile"}`,
    );
    expect(res.status).toBe(202);
    expect(res.json).toEqual({ status: DispatchStatus.queued, id: expect.any(String) });
    const stored = await queuedMessages(fx.jsm, recipient);
    expect(stored).toHaveLength(1);
    expect(stored[0]?.subject).toBe(subjects.queue(ACCOUNT_A, recipient));
    expect(new TextDecoder().decode(stored[0]?.data)).toBe(payloadText);
    expect(stored[0]?.header.get(EventHeaders.id)).toBe(res.json.id);
    expect(Number(stored[0]?.header.get(EventHeaders.ts))).toBeGreaterThan(0);
    await settle(fx.peer);
    await vi.waitFor(() => expect(notices.length).toBeGreaterThan(0));
    sub.unsubscribe();
    expect(notices).toEqual([{ v: 1, id: res.json.id }]);
  });

  it('keeps tenants apart: account B queues on its own subject, never account A', async () => {
    const recipient = newRecipient();
    const res = await post(notifyBody(recipient, { api_key: KEYS.accountB }));
    expect(res.status).toBe(202);
    expect(await queuedMessages(fx.jsm, recipient)).toHaveLength(0);
    expect(await queuedMessages(fx.jsm, recipient, ACCOUNT_B)).toHaveLength(1);
  });
});

describe('routing and browser access', () => {
  it('answers unknown routes with 404 not_found JSON', async () => {
    const res = await request(fx.baseUrl, { method: 'POST', path: '/nope', body: '{}' });
    expect(res.status).toBe(404);
    expect(res.json.error.code).toBe('not_found');
  });

  it("answers a socket probe's GET of /ws/connect with a 404 any page may read (the SDK's wrong endpoint)", async () => {
    const res = await request(fx.baseUrl, {
      method: 'GET',
      path: '/ws/connect',
      headers: { origin: 'https://app.example.com' },
    });
    expect(res.status).toBe(404);
    expect(res.json.error.code).toBe('not_found');
    expect(res.headers['access-control-allow-origin']).toBe('*');
  });

  it('answers a wrong method on /notify with 405 method_not_allowed and Allow', async () => {
    const res = await request(fx.baseUrl, { method: 'GET', path: '/notify' });
    expect(res.status).toBe(405);
    expect(res.headers.allow).toBe('POST');
    expect(res.json.error.code).toBe('method_not_allowed');
  });

  it('answers a CORS preflight and reflects the Origin on the dispatch', async () => {
    const pre = await request(fx.baseUrl, {
      method: 'OPTIONS',
      headers: { origin: WEB_ORIGIN, 'access-control-request-method': 'POST' },
    });
    expect(pre.status).toBe(204);
    expect(pre.headers['access-control-allow-origin']).toBe(WEB_ORIGIN);
    expect(pre.headers['access-control-allow-headers']).toContain('Idempotency-Key');
    const res = await post(notifyBody(newRecipient(), { api_key: KEYS.web, client: 'web' }), {
      origin: WEB_ORIGIN,
    });
    expect(res.status).toBe(202);
    expect(res.headers['access-control-allow-origin']).toBe(WEB_ORIGIN);
  });
});
