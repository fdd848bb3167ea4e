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
  it("runs a turn's subscribes at its end, then one PING for them all, and settles them on its PONG", async () => {
    const nc = countingFlush();
    const shared = new SharedFlush(nc);
    const made: number[] = [];
    const settled: number[] = [];
    for (let i = 0; i < 5; i++) void shared.after(() => made.push(i)).then(() => settled.push(i));
    expect(made).toEqual([]);
    await turn();
    expect(made).toEqual([0, 1, 2, 3, 4]);
    expect(nc.pings()).toBe(1);
    expect(settled).toEqual([]);
    nc.pong();
    await turn();
    expect(settled).toEqual([0, 1, 2, 3, 4]);
  });

  it('gives a subscribe handed over after the PING left a PING of its own (its SUB came after the first)', async () => {
    const nc = countingFlush();
    const shared = new SharedFlush(nc);
    let first = false;
    let second = false;
    void shared
      .after(() => undefined)
      .then(() => {
        first = true;
      });
    await turn();
    void shared
      .after(() => undefined)
      .then(() => {
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

  it('rejects only the subscribe that threw; the flush error reaches every other waiter', async () => {
    const nc = countingFlush();
    const shared = new SharedFlush(nc);
    const threw = shared.after(() => {
      throw new Error('connection closed');
    });
    const fine = shared.after(() => undefined);
    await expect(threw).rejects.toThrow('connection closed');
    nc.pong();
    await expect(fine).resolves.toBeUndefined();
    const failing = new SharedFlush({ flush: () => Promise.reject(new Error('closed')) });
    await expect(
      Promise.all([failing.after(() => undefined), failing.after(() => undefined)]),
    ).rejects.toThrow('closed');
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
