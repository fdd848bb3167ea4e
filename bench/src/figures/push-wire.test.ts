import { describe, expect, it } from 'vitest';
import {
  abbaOrder,
  arrivalRate,
  idsOfMessage,
  mean,
  pooledPerEventUs,
  pushLagsMs,
  subscriptionBody,
} from './push-wire.js';

describe('push figure helpers', () => {
  it('rates arrivals as n − 1 intervals over their span, in any order', () => {
    expect(arrivalRate([1000, 3000, 2000])).toBe(1);
    expect(arrivalRate([0, 100, 200, 300, 400])).toBe(10);
    expect(arrivalRate([5])).toBeNaN();
    expect(arrivalRate([])).toBeNaN();
    expect(arrivalRate([7, 7])).toBeNaN();
  });

  it('times each pushed event from its acceptance, skipping ids it does not know', () => {
    const accepted = new Map([
      ['a', 100],
      ['b', 150],
    ]);
    const lags = pushLagsMs(
      [
        { at: 400, ids: ['a'] },
        { at: 500, ids: ['b', 'unknown'] },
      ],
      accepted,
    );
    expect(lags).toEqual([300, 350]);
    expect(pushLagsMs([], accepted)).toEqual([]);
  });

  it('reads the ids of a decrypted message, none from anything else', () => {
    expect(idsOfMessage({ id: 'a', ids: ['a', 'b', 3], count: 2 })).toEqual(['a', 'b']);
    expect(idsOfMessage(undefined)).toEqual([]);
    expect(idsOfMessage({ ids: 'a' })).toEqual([]);
  });

  it('writes the subscription body the SDK posts', () => {
    const sub = {
      endpoint: 'https://127.0.0.1:1/push/x',
      expirationTime: null,
      keys: { p256dh: 'p', auth: 'a' },
    };
    expect(JSON.parse(subscriptionBody('hk_test_k', 'r1', sub))).toEqual({
      api_key: 'hk_test_k',
      recipient: 'r1',
      client: 'mobile',
      kind: 'webpush',
      subscription: sub,
    });
  });

  it('orders A/B windows ABBA, alternating which side opens', () => {
    expect(abbaOrder('off', 'on', 0)).toEqual(['off', 'on', 'on', 'off']);
    expect(abbaOrder('off', 'on', 1)).toEqual(['on', 'off', 'off', 'on']);
    expect(abbaOrder('off', 'on', 4)).toEqual(['off', 'on', 'on', 'off']);
  });

  it('pools CPU per event over windows as total seconds over total deliveries', () => {
    expect(
      pooledPerEventUs([
        { delivered: 1000, seconds: 0.3 },
        { delivered: 3000, seconds: 0.5 },
      ]),
    ).toBeCloseTo(200, 9);
    expect(pooledPerEventUs([{ delivered: 0, seconds: 0.1 }])).toBeNaN();
    expect(pooledPerEventUs([])).toBeNaN();
    expect(mean([1, 2, 6])).toBe(3);
    expect(mean([])).toBeNaN();
  });
});
