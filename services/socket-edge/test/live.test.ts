import { randomUUID } from 'node:crypto';
import { EventHeaders, subjects } from '@herald/proto';
import { createInbox, headers } from 'nats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ACCOUNT_A,
  ACCOUNT_B,
  fetchText,
  keys,
  metric,
  openClient,
  type RunningEdge,
  type Stack,
  sendLive,
  sleep,
  startEdge,
  useEdgeStack,
  waitUntil,
} from './fixture.js';

let stack: Stack;
let edge: RunningEdge;

useEdgeStack((started) => {
  ({ stack, edge } = started);
});

describe('live events, plain framing', () => {
  it('writes the payload bytes as they came, and replies LiveReply', async () => {
    const recipient = randomUUID();
    const client = openClient(stack, edge.port, { recipient });
    await client.opened;
    // Key order, whitespace, a number beyond double precision and unicode must survive untouched.
    const payload =
      '{ "z": 1, "a": [true, null], "big": 12345678901234567890123, "txt": "héllo ✓" }';
    const reply = await sendLive(stack.nc, ACCOUNT_A, recipient, payload);
    expect(reply).toEqual({ v: 1, sockets: 1 });
    await waitUntil('the frame', () => client.frames.length === 1);
    expect(client.frames[0]).toBe(payload);
    client.ws.close();
  });

  it('reaches every socket of the recipient, and no other recipient', async () => {
    const recipient = randomUUID();
    const tab1 = openClient(stack, edge.port, { recipient });
    const tab2 = openClient(stack, edge.port, { recipient });
    const other = openClient(stack, edge.port);
    await Promise.all([tab1.opened, tab2.opened, other.opened]);
    const reply = await sendLive(stack.nc, ACCOUNT_A, recipient, '{"n":1}');
    expect(reply.sockets).toBe(2);
    await waitUntil('both tabs', () => tab1.frames.length === 1 && tab2.frames.length === 1);
    expect(tab1.frames).toEqual(['{"n":1}']);
    expect(tab2.frames).toEqual(['{"n":1}']);
    await sleep(50);
    expect(other.frames).toEqual([]);
    for (const c of [tab1, tab2, other]) c.ws.close();
  });

  it('does not answer for a recipient with no socket: the request fails with no responders', async () => {
    await expect(sendLive(stack.nc, ACCOUNT_A, randomUUID(), '{}')).rejects.toMatchObject({
      code: '503',
    });
  });

  it('isolates tenants: the same recipient id under another account gets nothing', async () => {
    const recipient = randomUUID();
    const ofB = openClient(stack, edge.port, { recipient, apiKey: keys.mobileB });
    await ofB.opened;
    await expect(sendLive(stack.nc, ACCOUNT_A, recipient, '{"for":"A"}')).rejects.toMatchObject({
      code: '503',
    });
    expect(await sendLive(stack.nc, ACCOUNT_B, recipient, '{"for":"B"}')).toEqual({
      v: 1,
      sockets: 1,
    });
    await waitUntil('the B frame', () => ofB.frames.length === 1);
    expect(ofB.frames).toEqual(['{"for":"B"}']);
    ofB.ws.close();
  });

  it('stops answering once the last socket of a recipient closed', async () => {
    const recipient = randomUUID();
    const client = openClient(stack, edge.port, { recipient });
    await client.opened;
    await sendLive(stack.nc, ACCOUNT_A, recipient, '1');
    client.ws.close();
    await client.closed;
    // Between the client's close and the edge's, a request finds the subscription but no writable
    // socket and is answered 0 (not sent: the sender queues it); after it, no responders.
    await waitUntil('the live subscription to go', async () => {
      try {
        await sendLive(stack.nc, ACCOUNT_A, recipient, '2', randomUUID(), 100);
        return false;
      } catch (err) {
        return (err as { code?: string }).code === '503';
      }
    });
    expect(client.frames).toContain('1');
  });
});

describe('live events, herald.v1 framing', () => {
  it('wraps the payload in the event envelope with the id and ts ingress set', async () => {
    const recipient = randomUUID();
    const client = openClient(stack, edge.port, { recipient, v1: true });
    await client.opened;
    expect(client.ws.protocol).toBe('herald.v1');
    const id = randomUUID();
    await sendLive(stack.nc, ACCOUNT_A, recipient, '{"big":12345678901234567890123}', id);
    await waitUntil('the envelope', () => client.frames.length === 1);
    const frame = client.frames[0] ?? '';
    expect(frame).toMatch(
      new RegExp(
        `^\\{"type":"event","id":"${id}","ts":\\d+,"payload":\\{"big":12345678901234567890123\\}\\}$`,
      ),
    );
    expect(client.events[0]).toMatchObject({ type: 'event', id });
    client.ws.close();
  });

  it('delivers live events to plain and herald.v1 sockets of one recipient alike', async () => {
    const recipient = randomUUID();
    const plain = openClient(stack, edge.port, { recipient });
    const v1 = openClient(stack, edge.port, { recipient, v1: true });
    await Promise.all([plain.opened, v1.opened]);
    expect((await sendLive(stack.nc, ACCOUNT_A, recipient, '[1,2]')).sockets).toBe(2);
    await waitUntil('both', () => plain.frames.length === 1 && v1.events.length === 1);
    expect(plain.frames[0]).toBe('[1,2]');
    expect(v1.events[0]?.payload).toEqual([1, 2]);
    plain.ws.close();
    v1.ws.close();
  });
});

describe('ops endpoints', () => {
  it('serves /healthz and /readyz publicly, /metrics and the checks on the ops listener only', async () => {
    expect(await fetchText(stack, edge.port, '/healthz')).toMatchObject({ status: 200 });
    const ready = await fetchText(stack, edge.port, '/readyz');
    expect(ready.status).toBe(200);
    expect(JSON.parse(ready.body)).toEqual({ status: 'ready' });
    expect((await fetchText(stack, edge.port, '/metrics')).status).toBe(404);
    const opsReady = await fetch(`http://127.0.0.1:${edge.opsPort}/readyz`);
    expect(await opsReady.json()).toMatchObject({ checks: { nats: true } });
    const client = openClient(stack, edge.port, { v1: true });
    await client.opened;
    await waitUntil(
      'the gauge',
      async () =>
        metric(
          await edge.metrics(),
          'herald_open_sockets{framing="herald.v1",service="socket-edge"}',
        ) === 1,
    );
    const text = await edge.metrics();
    for (const name of [
      'herald_live_deliveries_total',
      'herald_queued_deliveries_total',
      'herald_slow_consumer_closes_total',
      'herald_active_drainers',
    ]) {
      expect(text).toContain(`# TYPE ${name}`);
    }
    client.ws.close();
  });

  it('answers 404 elsewhere and 400 to a GET of the socket path without an upgrade', async () => {
    const notFound = await fetchText(stack, edge.port, '/nope');
    expect(notFound.status).toBe(404);
    expect(JSON.parse(notFound.body)).toMatchObject({ error: { code: 'not_found' } });
    const noUpgrade = await fetchText(stack, edge.port, '/ws/connect?api_key=x');
    expect(noUpgrade.status).toBe(400);
    expect(JSON.parse(noUpgrade.body)).toMatchObject({
      error: { code: 'invalid_field', field: 'Upgrade' },
    });
    // Readable from any page: the SDK's probe tells a live edge from a wrong URL by it.
    expect(noUpgrade.headers['access-control-allow-origin']).toBe('*');
  });
});

describe('a live event no socket proves', () => {
  let slowEdge: RunningEdge;
  beforeAll(async () => {
    slowEdge = await startEdge(stack, { LIVE_PROOF_TIMEOUT_MS: '300' });
  });
  afterAll(async () => {
    await slowEdge?.close();
  });

  it('is answered 0 once its proof is overdue, and its late proof is not answered', async () => {
    const recipient = randomUUID();
    const client = openClient(stack, slowEdge.port, { recipient, v1: true, autoAck: false });
    await client.opened;
    // Every answer to the first event, on an inbox of its own.
    const inbox = createInbox();
    const answers: unknown[] = [];
    const sub = stack.nc.subscribe(inbox, { callback: (_e, m) => answers.push(m.json()) });
    const id = randomUUID();
    const h = headers();
    h.set(EventHeaders.id, id);
    h.set(EventHeaders.ts, String(Date.now()));
    stack.nc.publish(subjects.live(ACCOUNT_A, recipient), new TextEncoder().encode('{"n":1}'), {
      reply: inbox,
      headers: h,
    });
    // The answer that lets the sender queue it, instead of its request timing out.
    await waitUntil('the 0 answer', () => answers.length === 1);
    expect(answers).toEqual([{ v: 1, sockets: 0 }]);
    expect(client.events.map((e) => e.id)).toEqual([id]);
    // Its proof now, then a second event proven after it on the same socket: by the second's
    // answer the edge has handled the first's proof, and answered nothing more for it.
    client.ack(id);
    const next = randomUUID();
    const proven = sendLive(stack.nc, ACCOUNT_A, recipient, '{"n":2}', next, 5000);
    await waitUntil('the second event', () => client.events.length === 2);
    client.ack(next);
    expect(await proven).toEqual({ v: 1, sockets: 1 });
    await stack.nc.flush();
    expect(answers).toEqual([{ v: 1, sockets: 0 }]);
    sub.unsubscribe();
    client.ws.close();
  });

  it('is answered 0 at once when the socket that took it closes before proving it', async () => {
    const recipient = randomUUID();
    const client = openClient(stack, edge.port, { recipient, v1: true, autoAck: false });
    await client.opened;
    const pending = sendLive(stack.nc, ACCOUNT_A, recipient, '{"n":1}', randomUUID(), 5000);
    await waitUntil('the event', () => client.events.length === 1);
    client.ws.close();
    expect(await pending).toEqual({ v: 1, sockets: 0 });
  });
});
