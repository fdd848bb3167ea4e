import { describe, expect, it } from 'vitest';
import { PingProof } from './ping-proof.js';

const turn = () => new Promise((resolve) => setImmediate(resolve));

describe('PingProof', () => {
  it('sends one ping per burst, proves what it covers on its pong, then pings for the rest', async () => {
    let seq = 0;
    const pings: Buffer[] = [];
    const proven: number[] = [];
    const proof = new PingProof(
      (token) => pings.push(token),
      (s) => proven.push(s),
      () => seq,
    );
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
});
