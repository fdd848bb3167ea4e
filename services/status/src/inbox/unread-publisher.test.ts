import { describe, expect, it } from 'vitest';
import type { Recipient } from './queries.js';
import { UnreadPublisher } from './unread-publisher.js';

/** A count query the test answers by hand, in any order. */
function harness() {
  const answers: Array<(counts: number[]) => void> = [];
  const published: Array<[string, number]> = [];
  const p = new UnreadPublisher({
    count: () => new Promise<number[]>((resolve) => answers.push(resolve)),
    publish: (r, n) => published.push([r.recipient, n]),
    failed: () => undefined,
  });
  return { p, answers, published };
}

const flush = () => new Promise((r) => setImmediate(r));
const alice: Recipient = { account: 'a', recipient: 'alice' };
const bob: Recipient = { account: 'a', recipient: 'bob' };

describe('UnreadPublisher', () => {
  it('drops a count answered after a newer one for the same recipient was published', async () => {
    const { p, answers, published } = harness();
    p.changed([alice]); // asked before the second change: reads 1
    p.changed([alice]); // asked after it: reads 2
    answers[1]?.([2]);
    await flush();
    answers[0]?.([1]);
    await flush();
    expect(published).toEqual([['alice', 2]]);
    expect(p.pending).toBe(0);
  });

  it('publishes counts answered in order, and keeps other recipients apart', async () => {
    const { p, answers, published } = harness();
    p.changed([alice, bob]);
    p.changed([bob]);
    answers[0]?.([1, 5]);
    await flush();
    answers[1]?.([6]);
    await flush();
    expect(published).toEqual([
      ['alice', 1],
      ['bob', 5],
      ['bob', 6],
    ]);
    // An older answer for bob coming last is dropped; alice's own is not held back by bob's.
    p.changed([alice, bob]);
    p.changed([bob]);
    answers[3]?.([9]);
    await flush();
    answers[2]?.([2, 8]);
    await flush();
    expect(published.slice(3)).toEqual([
      ['bob', 9],
      ['alice', 2],
    ]);
    expect(p.pending).toBe(0);
  });

  it('holds nothing once a failed count is over', async () => {
    const failures: unknown[] = [];
    const p = new UnreadPublisher({
      count: () => Promise.reject(new Error('db down')),
      publish: () => undefined,
      failed: (err) => failures.push(err),
    });
    p.changed([alice]);
    await flush();
    expect(failures).toHaveLength(1);
    expect(p.pending).toBe(0);
  });
});
