import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { Delivery } from './delivery.js';
import { ProofLedger } from './proof-ledger.js';

/** A Delivery that records what it was told. */
function recorder(live = false) {
  const told: string[] = [];
  const delivery: Delivery = {
    live,
    written: () => told.push('written'),
    proven: () => told.push('proven'),
    lost: () => told.push('lost'),
    overdue: () => told.push('overdue'),
  };
  return { delivery, told };
}

const ledger = (over: Partial<ConstructorParameters<typeof ProofLedger>[0]> = {}) =>
  new ProofLedger({ maxEvents: 4, maxBytes: 100, liveProofTimeoutMs: 1000, ...over });

describe('ProofLedger', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('fits up to maxEvents and maxBytes exactly, and any one event when empty', () => {
    const l = ledger();
    expect(l.fits(1000)).toBe(true);
    for (let i = 0; i < 4; i++) {
      expect(l.fits(25)).toBe(true);
      l.add(`e${i}`, 25, recorder().delivery);
    }
    expect(l.count).toBe(4);
    expect(l.bytes).toBe(100);
    expect(l.fits(0)).toBe(false);
    const bytes = ledger();
    bytes.add('a', 60, recorder().delivery);
    expect(bytes.fits(40)).toBe(true);
    expect(bytes.fits(41)).toBe(false);
  });

  it('has room for the queue drain only up to half of each cap', () => {
    const l = ledger();
    l.add('a', 10, recorder().delivery);
    expect(l.hasRoomFor(40)).toBe(true);
    expect(l.hasRoomFor(41)).toBe(false);
    l.add('b', 10, recorder().delivery);
    expect(l.hasRoomFor(1)).toBe(false);
  });

  it('proves every write up to a sequence, in order, and frees its room', () => {
    const l = ledger();
    const a = recorder();
    const b = recorder();
    const c = recorder();
    l.add('a', 10, a.delivery);
    const upTo = l.add('b', 10, b.delivery);
    l.add('c', 10, c.delivery);
    l.proveUpTo(upTo);
    expect([a.told, b.told, c.told]).toEqual([['proven'], ['proven'], []]);
    expect(l.count).toBe(1);
    expect(l.bytes).toBe(10);
  });

  it('proves every write of an acked id, ignores unknown ids, and loses the rest on close', () => {
    const l = ledger();
    const first = recorder();
    const again = recorder();
    const other = recorder();
    l.add('x', 1, first.delivery);
    l.add('y', 1, other.delivery);
    l.add('x', 1, again.delivery);
    l.proveId('unknown');
    l.proveId('x');
    l.close();
    l.close();
    expect([first.told, again.told, other.told]).toEqual([['proven'], ['proven'], ['lost']]);
    expect(l.count).toBe(0);
  });

  it('still proves a later write of an id after an earlier one was proven by sequence', () => {
    const l = ledger();
    const first = recorder();
    const later = recorder();
    const upTo = l.add('x', 1, first.delivery);
    l.add('x', 1, later.delivery);
    l.proveUpTo(upTo);
    l.proveId('x');
    l.proveId('x');
    const again = recorder();
    l.add('x', 1, again.delivery);
    l.proveId('x');
    expect([first.told, later.told, again.told]).toEqual([['proven'], ['proven'], ['proven']]);
    expect(l.count).toBe(0);
  });

  it('tells a live delivery it is overdue once, at its deadline, and never a queued one', () => {
    const l = ledger();
    const live = recorder(true);
    const queued = recorder(false);
    l.add('q', 1, queued.delivery);
    l.add('l', 1, live.delivery);
    vi.advanceTimersByTime(500);
    const later = recorder(true);
    l.add('m', 1, later.delivery);
    vi.advanceTimersByTime(499);
    expect(live.told).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(live.told).toEqual(['overdue']);
    expect(later.told).toEqual([]);
    vi.advanceTimersByTime(500);
    expect(later.told).toEqual(['overdue']);
    vi.advanceTimersByTime(5000);
    l.close();
    expect([live.told, later.told, queued.told]).toEqual([
      ['overdue', 'lost'],
      ['overdue', 'lost'],
      ['lost'],
    ]);
  });
});
