import { randomUUID } from 'node:crypto';
import { HeraldError, type Subscription } from '@herald/sdk';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { InboxRelay, RELAY_TIMEOUT_MS } from '../../src/inbox-relay.js';

/**
 * The relay between tabs over Node's BroadcastChannel (the same API as the browser's); the
 * leader's side is a Subscription whose inbox methods a test scripts (the SDK's own are tested
 * against fake and real sockets). Real tabs in Chromium: test/browser/inbox.test.ts.
 */
function leaderSub(): Subscription & { calls: unknown[] } {
  const calls: unknown[] = [];
  return {
    calls,
    history: async (o: unknown) => {
      calls.push(['history', o]);
      if ((o as { before: string | null }).before === '0')
        throw new HeraldError('invalid_field', 'cursor must be a `next` value', {
          field: 'before',
        });
      return { events: [{ id: 'e1', ts: 1, payload: { a: 1 }, read: false }], next: null };
    },
    markRead: async (ids: readonly string[]) => calls.push(['read', ids]),
    markAllRead: async () => {
      calls.push(['all']);
      throw new HeraldError('inbox_disabled', 'this key keeps no inbox', { field: 'type' });
    },
  } as unknown as Subscription & { calls: unknown[] };
}

describe('InboxRelay: follower tabs ask the leader tab', () => {
  const relays: InboxRelay[] = [];
  const relay = (name: string) => {
    const r = new InboxRelay(name);
    relays.push(r);
    return r;
  };
  afterEach(() => {
    for (const r of relays.splice(0)) r.close();
    vi.useRealTimers();
  });

  it("runs a follower's history and read marks on the leader's subscription, with their answers", async () => {
    const name = randomUUID();
    const leader = relay(name);
    const follower = relay(name);
    const sub = leaderSub();
    leader.serve(sub);
    await expect(follower.run({ history: { before: null, limit: 5 } })).resolves.toEqual({
      events: [{ id: 'e1', ts: 1, payload: { a: 1 }, read: false }],
      next: null,
    });
    await expect(follower.run({ read: ['e1'] }), 'the count after it').resolves.toBe(2);
    await expect(follower.run({ read: true })).rejects.toMatchObject({ code: 'inbox_disabled' });
    await expect(leader.run({ read: ['e2'] }), 'the leader runs its own').resolves.toBe(4);
    expect(sub.calls).toEqual([
      ['history', { before: null, limit: 5 }],
      ['read', ['e1']],
      ['all'],
      ['read', ['e2']],
    ]);
    const refused = follower.run({ history: { before: '0', limit: 5 } });
    await expect(refused).rejects.toBeInstanceOf(HeraldError);
    await expect(refused).rejects.toMatchObject({ code: 'invalid_field' });
  });

  it('only the relays of one channel name hear each other', async () => {
    const other = relay(randomUUID());
    other.serve(leaderSub());
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const alone = relay(randomUUID()).run({ read: true });
    vi.advanceTimersByTime(RELAY_TIMEOUT_MS);
    await expect(alone, 'no leader for this name').rejects.toMatchObject({ code: 'not_connected' });
  });

  it('rejects what waits when the tab closes its relay, and after the leader stops serving', async () => {
    const name = randomUUID();
    const leader = relay(name);
    const follower = relay(name);
    const waiting = follower.run({ history: { before: null, limit: 1 } });
    follower.close();
    await expect(waiting).rejects.toMatchObject({ code: 'not_connected' });
    leader.serve(leaderSub());
    leader.serve(undefined);
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const late = relay(name).run({ read: true });
    vi.advanceTimersByTime(RELAY_TIMEOUT_MS);
    await expect(late).rejects.toMatchObject({ code: 'not_connected' });
  });
});
