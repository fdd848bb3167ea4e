import { describe, expect, it } from 'vitest';
import {
  AckFrame,
  EventsFrame,
  encodeEventsFrame,
  MAX_EVENTS_PER_FRAME,
  ServerFrame,
} from './socket.js';

const id = (i: number) => `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`;

describe('batched herald.v1 frames (batch=1)', () => {
  it('encodes an events frame with each payload byte for byte, and it parses as one', () => {
    const text = encodeEventsFrame([
      { id: id(1), ts: 1, payloadJson: '{"a": 1}' },
      { id: id(2), ts: 2, payloadJson: '"x"' },
    ]);
    expect(text).toContain('"payload":{"a": 1}');
    const frame = ServerFrame.parse(JSON.parse(text));
    expect(frame).toEqual({
      type: 'events',
      events: [
        { id: id(1), ts: 1, payload: { a: 1 } },
        { id: id(2), ts: 2, payload: 'x' },
      ],
    });
  });

  it('bounds an events frame and a list ack at MAX_EVENTS_PER_FRAME ids', () => {
    const events = (n: number) =>
      Array.from({ length: n }, (_, i) => ({ id: id(i), ts: i, payload: null }));
    expect(
      EventsFrame.safeParse({ type: 'events', events: events(MAX_EVENTS_PER_FRAME) }).success,
    ).toBe(true);
    expect(
      EventsFrame.safeParse({ type: 'events', events: events(MAX_EVENTS_PER_FRAME + 1) }).success,
    ).toBe(false);
    expect(EventsFrame.safeParse({ type: 'events', events: [] }).success).toBe(false);
    const ids = (n: number) => Array.from({ length: n }, (_, i) => id(i));
    expect(AckFrame.safeParse({ type: 'ack', ids: ids(MAX_EVENTS_PER_FRAME) }).success).toBe(true);
    expect(AckFrame.safeParse({ type: 'ack', ids: ids(MAX_EVENTS_PER_FRAME + 1) }).success).toBe(
      false,
    );
    expect(AckFrame.safeParse({ type: 'ack', ids: [] }).success).toBe(false);
    expect(AckFrame.safeParse({ type: 'ack', id: id(1) }).success).toBe(true);
  });

  it('fits a full list ack of UUIDs in the edge default client frame limit (8,192 bytes)', () => {
    const ack = JSON.stringify({
      type: 'ack',
      ids: Array.from({ length: MAX_EVENTS_PER_FRAME }, (_, i) => id(i)),
    });
    expect(Buffer.byteLength(ack)).toBeLessThanOrEqual(8192);
  });
});
