import { describe, expect, it } from 'vitest';
import { LiveDelivery } from './live-delivery.js';

function setup() {
  const replies: number[] = [];
  let unsent = 0;
  let wrote = 0;
  const live = new LiveDelivery({
    wrote: () => wrote++,
    reply: (n) => replies.push(n),
    unsent: () => unsent++,
  });
  return { live, replies, unsent: () => unsent, wrote: () => wrote };
}

describe('LiveDelivery', () => {
  it('answers "sent" at the first proof, not at the write, with the sockets it was handed to', () => {
    const { live, replies, wrote } = setup();
    const a = live.forSocket();
    live.handed();
    const b = live.forSocket();
    live.handed();
    a.written();
    b.written();
    // Written is not delivered: an edge that dies now must leave the event with its sender.
    expect(replies).toEqual([]);
    expect(wrote()).toBe(2);
    a.overdue();
    b.proven();
    a.lost();
    expect(replies).toEqual([2]);
  });

  it('answers once however many sockets prove it', () => {
    const { live, replies, unsent } = setup();
    const a = live.forSocket();
    live.handed();
    const b = live.forSocket();
    live.handed();
    live.offered();
    a.written();
    b.written();
    a.proven();
    b.proven();
    expect(replies).toEqual([2]);
    expect(unsent()).toBe(0);
  });

  it('says unsent at once when no socket took the write', () => {
    const { live, unsent } = setup();
    live.forSocket();
    live.offered();
    expect(unsent()).toBe(1);
  });

  it('says unsent once every socket lost it or let its proof go overdue, not while one may still prove it', () => {
    const { live, unsent, replies } = setup();
    const a = live.forSocket();
    live.handed();
    const b = live.forSocket();
    live.handed();
    live.offered();
    a.written();
    b.written();
    a.lost();
    expect(unsent()).toBe(0);
    b.overdue();
    b.lost();
    expect(unsent()).toBe(1);
    expect(replies).toEqual([]);
  });

  it('an abandoned delivery (a batch answered it not sent) does not answer a late proof', () => {
    const { live, replies } = setup();
    const a = live.forSocket();
    live.handed();
    live.offered();
    a.written();
    expect(live.abandon()).toBe(true);
    a.proven();
    expect(replies).toEqual([]);
  });

  it('cannot abandon what was already answered sent', () => {
    const { live, replies } = setup();
    const a = live.forSocket();
    live.handed();
    a.written();
    a.proven();
    expect(live.abandon()).toBe(false);
    expect(replies).toEqual([1]);
  });
});
