import { dashboardRecipient, type StatusEvent } from '@herald/proto';
import { describe, expect, it } from 'vitest';
import { currentStatus, mergeBatch } from './merge.js';

const now = new Date('2026-01-01T00:00:00Z');
const at = Date.parse('2026-01-01T00:00:30Z');

function rec(over: Partial<StatusEvent> & Pick<StatusEvent, 'id' | 'status'>): StatusEvent {
  return { v: 1, account_id: 'a', key_id: 'k', recipient: 'r', at, ...over };
}

describe('mergeBatch', () => {
  it('counts each status once per event, however often its record comes', () => {
    const m = mergeBatch(
      [rec({ id: '1', status: 'pending' }), rec({ id: '1', status: 'pending' })],
      new Map(),
      () => false,
      now,
    );
    expect(m.rows).toHaveLength(1);
    expect(m.rollup).toEqual([
      expect.objectContaining({ key_id: 'k', status: 'pending', count: 1 }),
    ]);
  });

  it('counts a delivery under the sending key when the edge record comes first in the batch', () => {
    const delivered = { v: 1, id: '1', account_id: 'a', status: 'delivered', at } as const;
    const m = mergeBatch(
      [delivered, rec({ id: '1', status: 'pending' })],
      new Map(),
      () => false,
      now,
    );
    expect(m.deferred).toEqual([]);
    expect(currentStatus(m.rows[0] as never)).toBe('delivered');
    expect(m.rollup.map((r) => [r.key_id, r.status])).toEqual([
      ['k', 'pending'],
      ['k', 'delivered'],
    ]);
  });

  it('holds back a delivery whose event is not known yet, until told to accept it', () => {
    const delivered = { v: 1, id: '1', account_id: 'a', status: 'delivered', at } as const;
    expect(mergeBatch([delivered], new Map(), () => false, now).deferred).toEqual([0]);
    const accepted = mergeBatch([delivered], new Map(), () => true, now);
    expect(accepted.deferred).toEqual([]);
    expect(accepted.rollup[0]).toMatchObject({ key_id: '', status: 'delivered' });
  });

  it("leaves out events to the account's dashboard recipient (billing notices): not the customer's", () => {
    const account = '0b6a5d3e-7c41-4f2a-9d0e-1a2b3c4d5e6f';
    const notice = { account_id: account, recipient: dashboardRecipient(account) };
    const m = mergeBatch(
      [
        rec({ id: '1', status: 'sent', ...notice }),
        rec({ id: '2', status: 'pending', ...notice, key_id: 'dashboard-sender' }),
        { v: 1, id: '2', status: 'delivered', at, ...notice },
        rec({ id: '3', status: 'sent', account_id: account }),
      ],
      new Map(),
      () => true,
      now,
    );
    expect(m.rows.map((r) => r.id)).toEqual(['3']);
    expect(m.rollup).toEqual([expect.objectContaining({ key_id: 'k', status: 'sent', count: 1 })]);
    expect(m.deferred).toEqual([]);
  });

  it('ignores a record naming another account than the event row', () => {
    const first = mergeBatch([rec({ id: '1', status: 'sent' })], new Map(), () => false, now);
    const existing = new Map(first.rows.map((r) => [r.id, r]));
    const m = mergeBatch(
      [rec({ id: '1', status: 'failed', account_id: 'b' })],
      existing,
      () => false,
      now,
    );
    expect(m.rows).toEqual([]);
    expect(m.rollup).toEqual([]);
  });

  it('buckets transitions by minute', () => {
    const m = mergeBatch(
      [
        rec({ id: '1', status: 'sent', at }),
        rec({ id: '2', status: 'sent', at: at + 10_000 }),
        rec({ id: '3', status: 'sent', at: at + 60_000 }),
      ],
      new Map(),
      () => false,
      now,
    );
    expect(m.rollup.map((r) => [r.minute.toISOString(), r.count])).toEqual([
      ['2026-01-01T00:00:00.000Z', 2],
      ['2026-01-01T00:01:00.000Z', 1],
    ]);
  });
});
