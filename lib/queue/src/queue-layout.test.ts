import { randomUUID } from 'node:crypto';
import { QUEUE_SLOTS, queueSlot, subjects } from '@herald/proto';
import { describe, expect, it } from 'vitest';
import { DEFAULT_QUEUE_PARTITIONS, QueueLayout } from './queue-layout.js';

const ACCOUNT = '8b0f5a8e-6b1c-4f43-9b2e-3f9a1c2d4e5f';
const RECIPIENT = '1d2c3b4a-5e6f-4a7b-8c9d-0e1f2a3b4c5d';

describe('QueueLayout', () => {
  it('puts a recipient in the same partition in every process and release (FNV-1a, pinned)', () => {
    // Pinned: changing the hash would strand every stored event in the wrong stream.
    expect(queueSlot(ACCOUNT, RECIPIENT)).toBe(queueSlot(ACCOUNT, RECIPIENT));
    const slot = queueSlot(ACCOUNT, RECIPIENT);
    expect(subjects.queue(ACCOUNT, RECIPIENT)).toBe(
      `rt.queue.${slot.toString(16).padStart(2, '0')}.${ACCOUNT}.${RECIPIENT}`,
    );
    expect(fnv1a(`${ACCOUNT}.${RECIPIENT}`) % QUEUE_SLOTS).toBe(slot);
    const layout = new QueueLayout();
    expect(layout.partitions).toBe(DEFAULT_QUEUE_PARTITIONS);
    expect(layout.partitionOf(ACCOUNT, RECIPIENT)).toBe(slot % 16);
    expect(layout.streamOf(ACCOUNT, RECIPIENT)).toBe(`HERALD_QUEUE_${slot % 16}`);
  });

  it('gives every slot to exactly one partition, and the subject to the stream that captures it', () => {
    for (const n of [1, 3, 16, 64, 256]) {
      const layout = new QueueLayout(n);
      const all = layout.streams.flatMap((_, p) => layout.subjectsOf(p));
      expect(all).toHaveLength(QUEUE_SLOTS);
      expect(new Set(all).size).toBe(QUEUE_SLOTS);
      const r = randomUUID();
      const subject = subjects.queue(ACCOUNT, r);
      const owner = layout.subjectsOf(layout.partitionOf(ACCOUNT, r));
      expect(owner).toContain(`${subject.split('.').slice(0, 3).join('.')}.>`);
    }
  });

  it('spreads recipients evenly over 16 partitions', () => {
    const layout = new QueueLayout(16);
    const counts = new Array<number>(16).fill(0);
    for (let i = 0; i < 16_000; i++) {
      const p = layout.partitionOf(ACCOUNT, randomUUID());
      counts[p] = (counts[p] ?? 0) + 1;
    }
    // 1,000 expected in each; a fair hash stays well within ±25 %.
    for (const c of counts) expect(c).toBeGreaterThan(750);
    for (const c of counts) expect(c).toBeLessThan(1250);
  });

  it('accepts 1 to 256 partitions and refuses anything else', () => {
    expect(new QueueLayout(1).streams).toEqual(['HERALD_QUEUE_0']);
    expect(new QueueLayout(256).streams).toHaveLength(256);
    for (const bad of [0, 257, 1.5, -1]) expect(() => new QueueLayout(bad)).toThrow(RangeError);
  });
});

/** The reference FNV-1a (32-bit), written out independently of proto's. */
function fnv1a(text: string): number {
  let h = 2166136261n;
  for (const byte of new TextEncoder().encode(text)) {
    h ^= BigInt(byte);
    h = (h * 16777619n) % 4294967296n;
  }
  return Number(h);
}

describe('QueueLayout.streamOfSlot', () => {
  it('names the stream streamOf names, for every partition count, and refuses a slot out of range', () => {
    for (const partitions of [1, 2, 3, 16, 255, 256]) {
      const layout = new QueueLayout(partitions);
      for (let i = 0; i < 200; i++) {
        const account = randomUUID();
        const recipient = randomUUID();
        expect(layout.streamOfSlot(queueSlot(account, recipient))).toBe(
          layout.streamOf(account, recipient),
        );
      }
      for (const bad of [-1, QUEUE_SLOTS, 1.5, Number.NaN]) {
        expect(() => layout.streamOfSlot(bad)).toThrow(RangeError);
      }
    }
  });
});
