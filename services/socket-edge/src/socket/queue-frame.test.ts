import { describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import type { Delivery } from './delivery.js';
import { EventFrames } from './framing.js';
import { QueueFrame } from './queue-frame.js';

/** What QueueFrame uses of a WebSocket: its state and send (no transport: nothing to cork). */
function sink() {
  const sent: string[] = [];
  const ws = {
    readyState: WebSocket.OPEN,
    send(data: Buffer, _opts: unknown, cb: (err?: Error) => void) {
      sent.push(data.toString('utf8'));
      cb();
    },
  };
  return { sent, ws: ws as unknown as WebSocket };
}

function v1(id: string, payload: string): Buffer {
  const event = { id, ts: 7, data: new Uint8Array(Buffer.from(payload)) };
  return new EventFrames(event).frameFor('herald.v1').data as Buffer;
}

const delivery = (log: string[], id: string): Delivery => ({
  live: false,
  written: () => log.push(id),
  proven: () => {},
  lost: () => {},
  overdue: () => {},
});

const tick = () => new Promise<void>((resolve) => process.nextTick(resolve));

describe('QueueFrame', () => {
  it("sends the tick's events as one events frame at its end, a lone event as its event frame", async () => {
    const { sent, ws } = sink();
    const written: string[] = [];
    const frame = new QueueFrame(ws, { events: 64, bytes: 65_536, ackBytes: 8192 });
    frame.add(v1('a', '{"x":1}'), 'a', delivery(written, 'a'));
    frame.add(v1('b', '"é"'), 'b', delivery(written, 'b'));
    expect(sent).toEqual([]);
    await tick();
    expect(sent).toEqual([
      '{"type":"events","events":[{"id":"a","ts":7,"payload":{"x":1}},{"id":"b","ts":7,"payload":"é"}]}',
    ]);
    expect(JSON.parse(sent[0] as string).events).toHaveLength(2);
    expect(written).toEqual(['a', 'b']);
    frame.add(v1('c', '3'), 'c', delivery(written, 'c'));
    await tick();
    expect(sent[1]).toBe('{"type":"event","id":"c","ts":7,"payload":3}');
  });

  it('starts a new frame at the events cap, the byte cap and the list-ack cap; a big event goes alone', async () => {
    const count = sink();
    const byEvents = new QueueFrame(count.ws, { events: 2, bytes: 65_536, ackBytes: 8192 });
    for (const id of ['a', 'b', 'c']) byEvents.add(v1(id, '1'), id, delivery([], id));
    await tick();
    expect(count.sent.map((f) => JSON.parse(f).events?.length ?? 1)).toEqual([2, 1]);

    const bytes = sink();
    // Each entry is {"id":"a","ts":7,"payload":"xxxx…"} plus a comma; a frame of three is over 140.
    const byBytes = new QueueFrame(bytes.ws, { events: 64, bytes: 140, ackBytes: 8192 });
    for (const id of ['a', 'b', 'c'])
      byBytes.add(v1(id, `"${'x'.repeat(20)}"`), id, delivery([], id));
    byBytes.add(v1('big', `"${'y'.repeat(500)}"`), 'big', delivery([], 'big'));
    await tick();
    expect(bytes.sent.every((f) => f.length <= 140 || !f.startsWith('{"type":"events"'))).toBe(
      true,
    );
    expect(bytes.sent.map((f) => JSON.parse(f).type)).toEqual(['events', 'event', 'event']);
    expect(JSON.parse(bytes.sent[2] as string).id).toBe('big');

    const acks = sink();
    // 22 + 39 per UUID: an ackBytes of 100 takes 2 UUIDs (100 bytes), not 3.
    const byAck = new QueueFrame(acks.ws, { events: 64, bytes: 65_536, ackBytes: 100 });
    const ids = Array.from({ length: 3 }, () => crypto.randomUUID());
    for (const id of ids) byAck.add(v1(id, '1'), id, delivery([], id));
    await tick();
    const first = JSON.parse(acks.sent[0] as string).events.map((e: { id: string }) => e.id);
    expect(first).toEqual(ids.slice(0, 2));
    expect(JSON.stringify({ type: 'ack', ids: first }).length).toBeLessThanOrEqual(100);
    expect(JSON.parse(acks.sent[1] as string).id).toBe(ids[2]);
  });

  it('sends nothing once the socket is no longer open (its close reports the events lost)', async () => {
    const { sent, ws } = sink();
    const written: string[] = [];
    const frame = new QueueFrame(ws, { events: 64, bytes: 65_536, ackBytes: 8192 });
    frame.add(v1('a', '1'), 'a', delivery(written, 'a'));
    (ws as unknown as { readyState: number }).readyState = WebSocket.CLOSING;
    await tick();
    expect(sent).toEqual([]);
    expect(written).toEqual([]);
  });
});
