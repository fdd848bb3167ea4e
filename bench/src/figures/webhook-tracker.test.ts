import { describe, expect, it } from 'vitest';
import { WebhookTracker } from './webhook-tracker.js';

const arrival = (messageId: string, eventId: string, at: number, type = 'event.queued') => ({
  messageId,
  eventId,
  type,
  at,
});

describe('WebhookTracker', () => {
  it('times each message from its event’s acceptance, once per webhook-id', () => {
    const t = new WebhookTracker();
    t.start({ lag: true });
    t.accepted('a', 100);
    t.hit(arrival('a:q', 'a', 130));
    t.hit(arrival('a:q', 'a', 140));
    t.close();
    expect(t).toMatchObject({ received: 1, duplicates: 1, late: 0, arrivals: 2 });
    expect(t.lagsMs).toEqual([30]);
    expect(t.byType.get('event.queued')).toBe(1);
  });

  it('holds a message that arrives before its event’s answer is read, and counts it then', () => {
    const t = new WebhookTracker();
    t.start({ lag: true });
    t.hit(arrival('b:q', 'b', 50));
    expect(t.received).toBe(0);
    t.accepted('b', 60);
    t.close();
    expect(t).toMatchObject({ received: 1, beforeAnswer: 1, firstAt: 50, lastAt: 50 });
    expect(t.lagsMs).toEqual([0]);
  });

  it('counts a message of an event never accepted in the window as late, not as the window’s', () => {
    const t = new WebhookTracker();
    t.start({ lag: true });
    t.hit(arrival('old:q', 'old', 10));
    t.close();
    expect(t).toMatchObject({ received: 0, late: 1 });
  });

  it('counts every message without timing it when the window wants only the count', () => {
    const t = new WebhookTracker();
    t.start({ lag: false });
    t.hit(arrival('c:s', 'c', 1, 'event.sent'));
    t.hit(arrival('c:d', 'c', 2, 'event.delivered'));
    t.close();
    expect(t).toMatchObject({ received: 2, late: 0 });
    expect(t.lagsMs).toEqual([]);
    expect([...t.byType.keys()]).toEqual(['event.sent', 'event.delivered']);
    t.start({ lag: true });
    expect(t).toMatchObject({ received: 0, duplicates: 0, arrivals: 2 });
  });
});
