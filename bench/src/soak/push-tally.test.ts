import type { PushArrival } from '@herald/testkit';
import { describe, expect, it } from 'vitest';
import { DeliveryLedger } from './ledger.js';
import { pushFailures, pushTally } from './push-tally.js';

const arrival = (id: string, message: unknown, error: string | null = null): PushArrival => ({
  id,
  at: 0,
  status: error === null ? 201 : 400,
  ttl: undefined,
  topic: undefined,
  urgency: undefined,
  contentEncoding: 'aes128gcm',
  message,
  error,
  vapid: undefined,
});

describe('pushTally', () => {
  const subs = new Map([
    ['s1', 'r1'],
    ['s2', 'r2'],
  ]);
  const ledger = new DeliveryLedger();
  ledger.accept('e1', 'r1', 'notify');
  ledger.accept('e2', 'r1', 'notify');
  ledger.accept('e3', 'r2', 'notify');
  ledger.accept('other', 'r9', 'notify');

  it('counts the pushes and the distinct ids they carried for their own recipient', () => {
    const t = pushTally(
      [arrival('s1', { ids: ['e1'] }), arrival('s1', { ids: ['e1', 'e2'] })],
      subs,
      ledger,
    );
    expect(t).toEqual({
      accepted: 3,
      pushes: 2,
      events: 2,
      broken: 0,
      misrouted: 0,
      unanswered: 0,
    });
    expect(pushFailures(t)).toEqual([]);
  });

  it('fails on a push that did not decrypt, and on an id pushed to another recipient', () => {
    const t = pushTally(
      [
        arrival('s2', undefined, 'decryption failed'),
        arrival('s2', { ids: ['e1', 'e3'] }),
        arrival('s2', { ids: ['never-answered'] }),
      ],
      subs,
      ledger,
    );
    expect(t).toMatchObject({ pushes: 2, events: 1, broken: 1, misrouted: 1, unanswered: 1 });
    expect(pushFailures(t)).toEqual([
      '1 push(es) did not decrypt or carried a VAPID header that did not verify',
      "1 pushed id(s) went to another recipient's subscription",
    ]);
  });

  it('fails a run whose push key had events accepted and no push arrived', () => {
    const t = pushTally([], subs, ledger);
    expect(pushFailures(t)).toEqual([
      'no push arrived although 3 event(s) of the push key were accepted',
    ]);
  });
});
