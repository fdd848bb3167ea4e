import { EventMsgHdrs } from '@herald/nats';
import { EventHeaders } from '@herald/proto';
import { type CoreNatsServer, startCoreNatsServer } from '@herald/testkit';
import { connect, headers, type JsMsg, type Msg, type MsgHdrs, type NatsConnection } from 'nats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { edgeEventOf, headerValue, queuedEventOf } from './edge-event.js';

let server: CoreNatsServer;
let nc: NatsConnection;

beforeAll(async () => {
  server = await startCoreNatsServer();
  nc = await connect(server.connectOptions());
});
afterAll(async () => {
  await nc?.close();
  await server?.stop();
});

/** Publishes one message and returns it as nats.js received it (the MsgImpl a JsMsg wraps). */
async function roundTrip(hdrs: MsgHdrs | undefined, data: string): Promise<Msg> {
  const subject = `edge-event.${Math.random().toString(36).slice(2)}`;
  const sub = nc.subscribe(subject, { max: 1 });
  nc.publish(subject, data, hdrs ? { headers: hdrs } : {});
  for await (const msg of sub) return msg;
  throw new Error('no message');
}

/** A JsMsg around a received message (as nats.js's JsMsgImpl holds it), counting header reads. */
function asJsMsg(msg: Msg): { jsMsg: JsMsg; headerReads: () => number } {
  let reads = 0;
  const jsMsg = {
    msg,
    get data() {
      return msg.data;
    },
    get headers() {
      reads++;
      return msg.headers;
    },
  } as unknown as JsMsg;
  return { jsMsg, headerReads: () => reads };
}

const fallback = () => ({ id: 'fallback', ts: 1 });

describe('queuedEventOf', () => {
  it('reads the headers ingress writes from the raw block, without nats.js decoding them', async () => {
    const msg = await roundTrip(
      new EventMsgHdrs([
        [EventHeaders.id, 'evt-é-1'],
        [EventHeaders.ts, '1700000000123'],
        [EventHeaders.msgId, 'acct:key'],
      ]),
      '{"a":1}',
    );
    const { jsMsg, headerReads } = asJsMsg(msg);
    const event = queuedEventOf(jsMsg, fallback);
    expect(event.id).toBe('evt-é-1');
    expect(event.ts).toBe(1_700_000_000_123);
    expect(new TextDecoder().decode(event.data)).toBe('{"a":1}');
    // The pinned nats.js keeps the raw block where the fast path reads it.
    expect(headerReads()).toBe(0);
    expect(event).toEqual(edgeEventOf(msg.headers, msg.data, fallback));
  });

  it('agrees with nats.js on headers in another order, repeated, or padded', async () => {
    const h = headers();
    h.append('X-Other', 'Herald-Id: not this');
    h.append(EventHeaders.ts, ' 42 ');
    h.append(EventHeaders.id, 'first');
    h.append(EventHeaders.id, 'second');
    const msg = await roundTrip(h, 'null');
    const { jsMsg } = asJsMsg(msg);
    expect(queuedEventOf(jsMsg, fallback)).toEqual(edgeEventOf(msg.headers, msg.data, fallback));
    expect(queuedEventOf(jsMsg, fallback).id).toBe('first');
  });

  it('falls back to the full read when the headers are missing or invalid', async () => {
    const none = asJsMsg(await roundTrip(undefined, '1'));
    expect(queuedEventOf(none.jsMsg, fallback)).toMatchObject({ id: 'fallback', ts: 1 });
    const h = headers();
    h.append(EventHeaders.id, 'x');
    h.append(EventHeaders.ts, '-5');
    const bad = asJsMsg(await roundTrip(h, '2'));
    expect(queuedEventOf(bad.jsMsg, fallback)).toMatchObject({ id: 'fallback', ts: 1 });
    expect(bad.headerReads()).toBeGreaterThan(0);
  });
});

describe('headerValue', () => {
  const block = 'NATS/1.0\r\nA-Herald-Id: no\r\nHerald-Id:  yes \r\nHerald-Ts: 7\r\n\r\n';
  it('finds the exact key at a line start and trims its value', () => {
    expect(headerValue(block, '\r\nHerald-Id:')).toBe('yes');
    expect(headerValue(block, '\r\nHerald-Ts:')).toBe('7');
    expect(headerValue(block, '\r\nMissing:')).toBeUndefined();
  });
});
