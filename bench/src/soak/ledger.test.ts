import { describe, expect, it } from 'vitest';
import { DeliveryLedger } from './ledger.js';

describe('DeliveryLedger', () => {
  it('counts accepted, delivered and duplicated events by id, whichever side is recorded first', () => {
    const l = new DeliveryLedger();
    l.arrive('e1', 'r1'); // a live event reaches the socket before its 200 reaches the sender
    l.accept('e1', 'r1', 'notify');
    l.accept('e2', 'r2', 'batch');
    l.arrive('e2', 'r2');
    l.arrive('e2', 'r2');
    l.arrive('e2', 'r2');
    l.accept('e3', 'r1', 'nats');
    expect(l.counts()).toEqual({
      accepted: 3,
      acceptedBy: { notify: 1, batch: 1, nats: 1 },
      delivered: 2,
      duplicates: 2,
      missing: 1,
      unanswered: 0,
      refused: {},
      failed: 0,
    });
    expect(l.missing()).toEqual([{ id: 'e3', recipient: 'r1' }]);
  });

  it('counts refusals by status, failures, and arrivals nobody was answered for', () => {
    const l = new DeliveryLedger();
    l.refuse(503);
    l.refuse(503);
    l.refuse(429);
    l.fail();
    l.arrive('lost-answer', 'r1');
    expect(l.counts()).toMatchObject({
      accepted: 0,
      refused: { '503': 2, '429': 1 },
      failed: 1,
      unanswered: 1,
    });
  });

  it('does not count an event that reached another recipient as delivered, and names it', () => {
    const l = new DeliveryLedger();
    l.accept('e1', 'r1', 'notify');
    l.arrive('e1', 'r2');
    expect(l.counts()).toMatchObject({ delivered: 0, missing: 1 });
    expect(l.missing()).toEqual([{ id: 'e1', recipient: 'r1' }]);
    expect(l.misrouted()).toEqual(['e1']);
    l.arrive('e1', 'r1');
    expect(l.misrouted()).toEqual(['e1']);
  });
});
