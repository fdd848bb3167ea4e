import { describe, expect, it } from 'vitest';
import { recheckWanted } from './recipient-session.js';
import { SharedFlush } from './shared-flush.js';

/** A connection's flush that counts its PINGs and answers each when told to. */
function countingFlush() {
  const pongs: Array<() => void> = [];
  return {
    pings: () => pongs.length,
    pong: () => pongs.shift()?.(),
    flush: () => new Promise<void>((resolve) => pongs.push(resolve)),
  };
}

const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('SharedFlush', () => {
  it('sends one PING for every flush asked in the same loop turn, and settles them all on its PONG', async () => {
    const nc = countingFlush();
    const shared = new SharedFlush(nc);
    const settled: number[] = [];
    for (let i = 0; i < 5; i++) void shared.flush().then(() => settled.push(i));
    expect(nc.pings()).toBe(0);
    await turn();
    expect(nc.pings()).toBe(1);
    nc.pong();
    await turn();
    expect(settled).toEqual([0, 1, 2, 3, 4]);
  });

  it('gives a flush asked after the PING left a PING of its own (its SUB is not covered by the first)', async () => {
    const nc = countingFlush();
    const shared = new SharedFlush(nc);
    let first = false;
    let second = false;
    void shared.flush().then(() => {
      first = true;
    });
    await turn();
    void shared.flush().then(() => {
      second = true;
    });
    await turn();
    expect(nc.pings()).toBe(2);
    nc.pong();
    await turn();
    expect([first, second]).toEqual([true, false]);
    nc.pong();
    await turn();
    expect(second).toBe(true);
  });

  it("rejects every waiter with the connection's error", async () => {
    const shared = new SharedFlush({ flush: () => Promise.reject(new Error('closed')) });
    const both = [shared.flush(), shared.flush()];
    await expect(Promise.all(both)).rejects.toThrow('closed');
    await expect(both[1]).rejects.toThrow('closed');
  });
});

describe('recheckWanted (QUEUE_RECHECK)', () => {
  const conn = (info: { cluster?: string; connect_urls?: string[] } | undefined) => ({
    info: info as never,
  });

  it('auto: no second look on a standalone server, one on a clustered or unknown one', () => {
    expect(recheckWanted('auto', conn({}))()).toBe(false);
    expect(recheckWanted('auto', conn({ connect_urls: [] }))()).toBe(false);
    expect(recheckWanted('auto', conn({ cluster: 'c1' }))()).toBe(true);
    expect(recheckWanted('auto', conn({ connect_urls: ['10.0.0.2:4222'] }))()).toBe(true);
    expect(recheckWanted('auto', conn(undefined))()).toBe(true);
  });

  it('always: a second look whatever the server', () => {
    expect(recheckWanted('always', conn({}))()).toBe(true);
  });
});
