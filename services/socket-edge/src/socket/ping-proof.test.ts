import { describe, expect, it } from 'vitest';
import { PingProof } from './ping-proof.js';

const turn = () => new Promise((resolve) => setImmediate(resolve));

/** A PingProof whose pings and proven sequences are recorded; `at` sets what it reads as written. */
function recorded() {
  const pings: Buffer[] = [];
  const proven: number[] = [];
  let written = () => 0;
  const proof = new PingProof(
    (token) => pings.push(token),
    (s) => proven.push(s),
    () => written(),
  );
  return { proof, pings, proven, at: (read: () => number) => (written = read) };
}

describe('PingProof', () => {
  it('sends one ping per burst, proves what it covers on its pong, then pings for the rest', async () => {
    const { proof, pings, proven, at } = recorded();
    let seq = 0;
    at(() => seq);
    for (let i = 0; i < 3; i++) {
      seq++;
      proof.wrote();
    }
    await turn();
    expect(pings).toHaveLength(1);
    // Written while the ping is out: they wait for the next one.
    seq++;
    proof.wrote();
    await turn();
    expect(pings).toHaveLength(1);
    // A heartbeat's pong (empty payload) proves nothing.
    proof.pong(Buffer.alloc(0));
    expect(proven).toEqual([]);
    proof.pong(pings[0] as Buffer);
    expect(proven).toEqual([3]);
    await turn();
    expect(pings).toHaveLength(2);
    proof.pong(pings[1] as Buffer);
    expect(proven).toEqual([3, 4]);
    await turn();
    expect(pings).toHaveLength(2);
  });

  it('cannot be answered without reading the ping: guessed payloads prove nothing', async () => {
    const { proof, pings, proven, at } = recorded();
    let seq = 0;
    at(() => seq);
    const tokens = new Set<string>();
    for (let round = 1; round <= 50; round++) {
      seq++;
      proof.wrote();
      await turn();
      const token = pings[round - 1] as Buffer;
      expect(token).toHaveLength(8);
      tokens.add(token.toString('hex'));
      // What a client that reads nothing could send: the old counter, an empty or a zero payload.
      for (const guess of [`p${round}`, `p${round - 1}`, '', '\0\0\0\0\0\0\0\0'])
        proof.pong(Buffer.from(guess));
      expect(proven).toHaveLength(round - 1);
      proof.pong(token);
      expect(proven).toHaveLength(round);
    }
    // Fifty pings, fifty different payloads.
    expect(tokens.size).toBe(50);
  });

  it('sends nothing once stopped', async () => {
    const pings: Buffer[] = [];
    const proof = new PingProof(
      (token) => pings.push(token),
      () => {},
      () => 1,
    );
    proof.wrote();
    proof.stop();
    await turn();
    expect(pings).toEqual([]);
  });

  it('flush sends the ping at once, one per claim, and never a second while one is out', async () => {
    const { proof, pings, proven, at } = recorded();
    let seq = 0;
    at(() => seq);
    // Nothing written: a flush sends nothing.
    expect(proof.claimFlush()).toBe(true);
    proof.flush();
    expect(pings).toHaveLength(0);
    // Two writes in one tick: the first claims the flush, the second finds it claimed.
    seq++;
    expect(proof.claimFlush()).toBe(true);
    seq++;
    expect(proof.claimFlush()).toBe(false);
    proof.flush();
    expect(pings).toHaveLength(1);
    // A write while the ping is out: its flush waits for the pong.
    seq++;
    expect(proof.claimFlush()).toBe(true);
    proof.flush();
    expect(pings).toHaveLength(1);
    proof.pong(pings[0] as Buffer);
    expect(proven).toEqual([2]);
    // The pong schedules the ping for the write made meanwhile; a flush sends it now, once.
    seq++;
    expect(proof.claimFlush()).toBe(true);
    proof.flush();
    expect(pings).toHaveLength(2);
    await turn();
    expect(pings).toHaveLength(2);
    proof.pong(pings[1] as Buffer);
    expect(proven).toEqual([2, 4]);
  });

  it('takes an in-band answer (no token) for the outstanding ping only, in order', async () => {
    const { proof, pings, proven, at } = recorded();
    let seq = 0;
    at(() => seq);
    // No ping out: an answer proves nothing.
    proof.answered();
    expect(proven).toEqual([]);
    seq = 2;
    proof.wrote();
    await turn();
    expect(pings).toHaveLength(1);
    seq = 3;
    proof.wrote();
    proof.answered();
    expect(proven).toEqual([2]);
    // The write made while the first ping was out gets the next ping, and its own answer.
    await turn();
    expect(pings).toHaveLength(2);
    proof.answered();
    expect(proven).toEqual([2, 3]);
    proof.answered();
    expect(proven).toEqual([2, 3]);
  });
});
