import { describe, expect, it } from 'vitest';
import { DeliveryTracker } from './delivery-tracker.js';

describe('DeliveryTracker', () => {
  it('counts each event of the window once, a second arrival as a duplicate, an earlier window as late', () => {
    const t = new DeliveryTracker();
    t.start(100);
    for (const seq of [100, 101, 101, 102, 99, 100]) t.hit(seq);
    expect({ received: t.received, duplicates: t.duplicates, late: t.late }).toEqual({
      received: 3,
      duplicates: 2,
      late: 1,
    });
    t.start(200);
    expect(t.received + t.duplicates + t.late).toBe(0);
  });

  it('counts every frame when the events are not distinct (the push loop)', () => {
    const t = new DeliveryTracker();
    t.start(0, { distinct: false });
    for (let k = 0; k < 5; k++) t.hit(0);
    expect({ received: t.received, duplicates: t.duplicates }).toEqual({
      received: 5,
      duplicates: 0,
    });
  });
});
