import { HeraldError, StatusEvent } from '@herald/proto';
import { describe, expect, it } from 'vitest';
import { notDelivered, type Outcome, queued, sent } from './outcome.js';
import { statusJson, withStatusEvents } from './status-events.js';

const AT = 1_790_000_000_123;

/** What the record was before it was written by hand: the literal, stringified. */
function expected(outcome: Outcome, target: Target, id: string): string {
  const event: StatusEvent = {
    v: 1,
    id,
    account_id: target.key.account_id,
    key_id: target.key.id,
    recipient: target.recipient,
    at: AT,
    status: outcome.kind === 'sent' ? 'sent' : outcome.kind === 'queued' ? 'pending' : 'failed',
  };
  if (outcome.kind === 'refused' || outcome.kind === 'failed') event.reason = outcome.code;
  return JSON.stringify(event);
}

interface Target {
  key: { id: string; account_id: string };
  recipient: string;
}

const plain: Target = {
  key: { id: 'key_01HZX3', account_id: 'acct_7f3a' },
  recipient: '0b4c4c39-6f5b-4b55-9a07-6a1c7c7c7c7c',
};
// Text a recipient or an account may hold that JSON must escape, or that is not plain ASCII.
const odd: Target = {
  key: { id: 'k"\\1', account_id: 'acct é' },
  recipient: 'user\n\u2028<b>🔑',
};
const outcomes: Outcome[] = [
  sent('6a1c7c7c-0b4c-4c39-6f5b-4b559a07c7c7'),
  queued('id-2'),
  notDelivered(new HeraldError('queue_full', 'full', { field: 'recipient' }), 'id-3'),
  notDelivered(new HeraldError('unavailable', 'down'), 'id-4'),
];

describe('statusJson', () => {
  it('is the record literal stringified, byte for byte, for every outcome', () => {
    for (const target of [plain, odd]) {
      for (const outcome of outcomes) {
        const id = outcome.id ?? 'none';
        const json = statusJson(outcome, target, id, AT);
        expect(json).toBe(expected(outcome, target, id));
        // And the status writer reads it.
        expect(StatusEvent.safeParse(JSON.parse(json)).success).toBe(true);
      }
    }
  });

  it('escapes an id that is not plain text', () => {
    expect(JSON.parse(statusJson(sent('a"b'), plain, 'a"b', AT)).id).toBe('a"b');
  });
});

describe('withStatusEvents', () => {
  it('adds one record per outcome under its account, after the outcome is known', async () => {
    const added: [string, string][] = [];
    const deliver = withStatusEvents(
      { addJson: (account, json) => added.push([account, json]) },
      async (_target: Target, id: string) => queued(id),
    );
    await expect(deliver(plain, 'e1', 'e1')).resolves.toEqual(queued('e1'));
    expect(added).toHaveLength(1);
    const [account, json] = added[0] ?? [];
    expect(account).toBe('acct_7f3a');
    expect(JSON.parse(json ?? '')).toMatchObject({
      id: 'e1',
      status: 'pending',
      recipient: plain.recipient,
    });
  });
});
