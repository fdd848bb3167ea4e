import { describe, expect, it } from 'vitest';
import type { EdgeEvent } from './edge-event.js';
import { LiveDelivery } from './live-delivery.js';

const event: EdgeEvent = { id: 'e1', ts: 1, data: new Uint8Array() };

function setup() {
  const replies: number[] = [];
  const stored: EdgeEvent[] = [];
  let unsent = 0;
  const live = new LiveDelivery(event, {
    wrote: () => {},
    reply: (n) => replies.push(n),
    store: (e) => stored.push(e),
    unsent: () => unsent++,
  });
  return { live, replies, stored, unsent: () => unsent };
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

  it('says unsent at once when no socket took the write', () => {
    const { live, unsent } = setup();
    live.forSocket();
    live.offered();
    expect(unsent()).toBe(1);
  });

  it('says unsent once every socket failed before a write completed, not while one may still complete', () => {
    const { live, unsent, replies } = setup();
    const a = live.forSocket();
    live.handed();
    const b = live.forSocket();
    live.handed();
    live.offered();
    a.lost();
    expect(unsent()).toBe(0);
    b.lost();
    b.lost();
    expect(unsent()).toBe(1);
    expect(replies).toEqual([]);
  });

  it('an abandoned delivery (a batch answered it not sent) neither answers nor stores a late write', () => {
    const { live, replies, stored } = setup();
    const a = live.forSocket();
    live.handed();
    live.offered();
    expect(live.abandon()).toBe(true);
    a.written();
    a.lost();
    expect(replies).toEqual([]);
    expect(stored).toEqual([]);
  });

  it('cannot abandon what was already answered sent: it stays stored if unproven', () => {
    const { live, replies, stored } = setup();
    const a = live.forSocket();
    live.handed();
    a.written();
    expect(live.abandon()).toBe(false);
    a.lost();
    expect(replies).toEqual([1]);
    expect(stored).toEqual([event]);
  });
});
