import { describe, expect, it } from 'vitest';
import type { EdgeEvent } from './edge-event.js';
import { LiveDelivery } from './live-delivery.js';

const event: EdgeEvent = { id: 'e1', ts: 1, data: new Uint8Array() };

function setup() {
  const replies: number[] = [];
  const stored: EdgeEvent[] = [];
  const live = new LiveDelivery(event, {
    wrote: () => {},
    reply: (n) => replies.push(n),
    store: (e) => stored.push(e),
  });
  return { live, replies, stored };
}

describe('LiveDelivery', () => {
  it('replies once, and stores nothing when one socket proves receipt', () => {
    const { live, replies, stored } = setup();
    const a = live.forSocket();
    live.handed();
    const b = live.forSocket();
    live.handed();
    a.written();
    b.written();
    a.overdue();
    b.proven();
    a.lost();
    expect(replies).toEqual([2]);
    expect(stored).toEqual([]);
  });

  it('stores once when every socket lost or let it go overdue', () => {
    const { live, stored } = setup();
    const a = live.forSocket();
    live.handed();
    const b = live.forSocket();
    live.handed();
    a.written();
    a.overdue();
    expect(stored).toEqual([]);
    b.lost();
    a.lost();
    expect(stored).toEqual([event]);
  });

  it('stores nothing that was never answered "sent" (the sender queues it)', () => {
    const { live, replies, stored } = setup();
    const a = live.forSocket();
    live.handed();
    a.lost();
    expect(replies).toEqual([]);
    expect(stored).toEqual([]);
    // A write that completes after the loss is answered, and then stored.
    a.written();
    expect(replies).toEqual([1]);
    expect(stored).toEqual([event]);
  });
});
