import { describe, expect, it } from 'vitest';
import type { ClaimedMessage } from './claim.js';
import { HeldMessages } from './held.js';

const msg = (endpoint: string, seq: number): ClaimedMessage =>
  ({ seq: String(seq), endpoint_id: endpoint }) as ClaimedMessage;

describe('HeldMessages', () => {
  it('hands messages out round robin over endpoints, at most perEndpoint in flight to each', () => {
    const held = new HeldMessages();
    for (let i = 0; i < 3; i++) held.add(msg('a', i), 1000);
    held.add(msg('b', 10), 1000);
    const none = () => expect.unreachable();
    const order = [1, 2, 3].map(() => held.next(2, 0, none)?.seq);
    // a, then b (a went to the back), then a's second; a is then at its cap of 2.
    expect(order).toEqual(['0', '10', '1']);
    expect(held.next(2, 0, none)).toBeUndefined();
    expect(held.size).toBe(1);
    held.finished('a');
    expect(held.next(2, 0, none)?.seq).toBe('2');
    expect(held.size).toBe(0);
  });

  it('releases a message held past its time instead of starting it, even behind a full endpoint', () => {
    const held = new HeldMessages();
    held.add(msg('a', 1), 100);
    held.add(msg('a', 2), 200);
    held.add(msg('a', 3), 300);
    const released: string[] = [];
    const release = (m: ClaimedMessage) => released.push(m.seq);
    expect(held.next(1, 150, release)?.seq).toBe('2');
    expect(released).toEqual(['1']);
    // a is at its cap; the sweep still releases what has run out.
    held.sweep(300, release);
    expect(released).toEqual(['1', '3']);
    expect(held.size).toBe(0);
    expect(held.takeAll()).toEqual([]);
  });

  it('gives every held message back at shutdown', () => {
    const held = new HeldMessages();
    held.add(msg('a', 1), 100);
    held.add(msg('b', 2), 100);
    expect(held.takeAll().map((m) => m.seq)).toEqual(['1', '2']);
    expect(held.size).toBe(0);
  });
});
