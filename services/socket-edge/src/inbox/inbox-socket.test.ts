import { createLogger } from '@herald/kit';
import { HeraldError } from '@herald/proto';
import { describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import type { InboxClient } from './inbox-client.js';
import { InboxSocket, refuseInboxFrame } from './inbox-socket.js';

const R = '0b0b0b0b-0000-4000-8000-00000000000b';
const A = '0a0a0a0a-0000-4000-8000-00000000000a';

/** A socket that records what is sent; the store's answers are settled by the test. */
function harness(limits = { perSecond: 1, burst: 3 }) {
  const sent: { type: string; [k: string]: unknown }[] = [];
  const ws = {
    readyState: WebSocket.OPEN,
    send: (text: string) => sent.push(JSON.parse(text)),
  } as unknown as WebSocket;
  const pending: { resolve: (v: unknown) => void; reject: (e: unknown) => void }[] = [];
  const answer = <T>() =>
    new Promise<T>((resolve, reject) => {
      pending.push({ resolve: resolve as (v: unknown) => void, reject });
    });
  const asked: unknown[][] = [];
  const op =
    (name: string) =>
    (...args: unknown[]) => {
      asked.push([name, ...args]);
      return answer();
    };
  const client = {
    unread: op('unread'),
    read: op('read'),
    history: op('history'),
  } as unknown as InboxClient;
  const socket = new InboxSocket(ws, {
    client,
    account: A,
    recipient: R,
    limits,
    logger: createLogger('test', 'silent'),
  });
  const settle = async (value: unknown) => {
    pending.shift()?.resolve(value);
    await new Promise((r) => setImmediate(r));
  };
  return { socket, sent, asked, settle, pending };
}

describe('InboxSocket', () => {
  it('drops the connect count when a notice came while it was read: it may predate the change', async () => {
    const h = harness();
    void h.socket.greet();
    // The store kept an event after the count was asked; its notice comes before the answer.
    h.socket.unread(1);
    await h.settle(0);
    expect(h.sent).toEqual([{ type: 'inbox', unread: 1 }]);
  });

  it('sends the unread count on connect, and a history page as the store answered it', async () => {
    const h = harness();
    void h.socket.greet();
    await h.settle(4);
    expect(h.sent).toEqual([{ type: 'inbox', unread: 4 }]);
    h.socket.handle({ type: 'history', before: null, limit: 2 });
    expect(h.asked[1]).toEqual(['history', A, R, null, 2]);
    const events = [{ id: 'e2', ts: 2, payload: { n: 2 }, read: false }];
    await h.settle({ events, next: '7' });
    expect(h.sent[1]).toEqual({ type: 'history', events, next: '7' });
    h.socket.handle({ type: 'read', all: true });
    expect(h.asked[2]).toEqual(['read', A, R, { all: true }]);
    await h.settle(0);
    expect(h.sent[2]).toEqual({ type: 'inbox', unread: 0 });
  });

  it('names the field of a bad request in-band and asks the store nothing', () => {
    const h = harness({ perSecond: 100, burst: 100 });
    h.socket.handle({ type: 'read', ids: [] });
    h.socket.handle({ type: 'read', all: false });
    h.socket.handle({ type: 'history', before: 'x', limit: 5 });
    h.socket.handle({ type: 'history', before: null, limit: 101 });
    h.socket.handle({ type: 'history', before: null });
    expect(h.asked).toEqual([]);
    expect(h.sent.map((f) => (f.error as { field: string }).field)).toEqual([
      'ids',
      'all',
      'before',
      'limit',
      'limit',
    ]);
    for (const f of h.sent) {
      expect(f.type).toBe('error');
      expect((f.error as { code: string }).code).toBe('invalid_field');
    }
    expect(h.socket.handle({ type: 'ack2' })).toBe(false);
  });

  it('asks the store one request at a time: the next waits for the answer and comes in order', async () => {
    const h = harness({ perSecond: 100, burst: 100 });
    h.socket.handle({ type: 'read', all: true });
    h.socket.handle({ type: 'history', before: null, limit: 1 });
    expect(h.asked).toHaveLength(1);
    await h.settle(0);
    expect(h.asked[1]).toEqual(['history', A, R, null, 1]);
    await h.settle({ events: [], next: null });
    expect(h.sent.map((f) => f.type)).toEqual(['inbox', 'history']);
  });

  it('takes a burst of requests and refuses the one past it', async () => {
    const h = harness({ perSecond: 1, burst: 3 });
    for (let n = 0; n < 3; n++) {
      h.socket.handle({ type: 'read', ids: [`e${n}`] });
      await h.settle(0);
    }
    expect(h.asked).toHaveLength(3);
    h.socket.handle({ type: 'read', ids: ['e3'] });
    expect(h.asked).toHaveLength(3);
    expect(h.sent.at(-1)).toMatchObject({
      type: 'error',
      error: { code: 'rate_limited', field: 'type' },
    });
  });

  it("passes the store's refusal on in-band and stays usable", async () => {
    const h = harness({ perSecond: 100, burst: 100 });
    h.socket.handle({ type: 'read', ids: ['e1'] });
    h.pending.shift()?.reject(new HeraldError('unavailable', 'store down'));
    await new Promise((r) => setImmediate(r));
    expect(h.sent[0]).toMatchObject({ type: 'error', error: { code: 'unavailable' } });
    h.socket.handle({ type: 'read', ids: ['e1'] });
    expect(h.asked).toHaveLength(2);
  });

  it("echoes a request's ref on its answer, its refusal and its rate_limited; notices carry none", async () => {
    const h = harness({ perSecond: 1, burst: 4 });
    h.socket.handle({ type: 'read', ids: ['e1'], ref: 'r-1' });
    h.socket.handle({ type: 'history', before: null, limit: 1, ref: 'r_2' });
    h.socket.unread(7); // another device's change, fanned out while the read runs
    await h.settle(3);
    await h.settle({ events: [], next: null });
    h.socket.handle({ type: 'read', ids: [], ref: 'r3' });
    h.socket.handle({ type: 'history', before: null, limit: 1, ref: 'x'.repeat(65) });
    expect(h.sent).toEqual([
      { type: 'inbox', unread: 7 },
      { type: 'inbox', unread: 3, ref: 'r-1' },
      { type: 'history', events: [], next: null, ref: 'r_2' },
      { type: 'error', error: expect.objectContaining({ field: 'ids' }), ref: 'r3' },
      { type: 'error', error: expect.objectContaining({ code: 'invalid_field', field: 'ref' }) },
    ]);
    expect(h.asked).toHaveLength(2);
    h.socket.handle({ type: 'read', all: true, ref: 'r5' });
    expect(h.sent.at(-1)).toEqual({
      type: 'error',
      error: expect.objectContaining({ code: 'rate_limited' }),
      ref: 'r5',
    });
    const store = harness({ perSecond: 100, burst: 100 });
    store.socket.handle({ type: 'history', before: null, limit: 1, ref: 'r6' });
    store.pending.shift()?.reject(new HeraldError('unavailable', 'store down'));
    await new Promise((r) => setImmediate(r));
    expect(store.sent).toEqual([
      { type: 'error', error: expect.objectContaining({ code: 'unavailable' }), ref: 'r6' },
    ]);
  });

  it('refuses read and history on a socket whose key keeps no inbox', () => {
    const sent: unknown[] = [];
    const ws = { readyState: WebSocket.OPEN, send: (t: string) => sent.push(JSON.parse(t)) };
    expect(refuseInboxFrame(ws as unknown as WebSocket, { type: 'history' })).toBe(true);
    expect(refuseInboxFrame(ws as unknown as WebSocket, { type: 'other' })).toBe(false);
    expect(refuseInboxFrame(ws as unknown as WebSocket, { type: 'read', ref: 'q1' })).toBe(true);
    expect(sent).toEqual([
      { type: 'error', error: expect.objectContaining({ code: 'inbox_disabled', field: 'type' }) },
      {
        type: 'error',
        error: expect.objectContaining({ code: 'inbox_disabled', field: 'type' }),
        ref: 'q1',
      },
    ]);
  });
});
