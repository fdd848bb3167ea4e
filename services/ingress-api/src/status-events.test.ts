import { HeraldError, PUSH_DEFAULT_TITLE, PUSH_PAYLOAD_JSON_MAX, StatusEvent } from '@herald/proto';
import { describe, expect, it } from 'vitest';
import { notDelivered, type Outcome, queued, sent } from './outcome.js';
import { aloneRecord, statusJson, withStatusEvents } from './status-events.js';

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
  key: {
    id: string;
    account_id: string;
    webhook_payload?: boolean;
    push?: { after_ms: number; ttl_s: number; title?: string; body?: string };
  };
  recipient: string;
  payload: Uint8Array;
  push?: { title: string; body?: string; url?: string; icon?: string };
  topic?: { name: string; id: string };
}

const PAYLOAD = Buffer.from('{"title":"hé \\"you\\"","n":1}');

const plain: Target = {
  key: { id: 'key_01HZX3', account_id: 'acct_7f3a' },
  recipient: '0b4c4c39-6f5b-4b55-9a07-6a1c7c7c7c7c',
  payload: PAYLOAD,
};
// Text a recipient or an account may hold that JSON must escape, or that is not plain ASCII.
const odd: Target = {
  key: { id: 'k"\\1', account_id: 'acct é' },
  recipient: 'user\n\u2028<b>🔑',
  payload: PAYLOAD,
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
  /** A batcher that records what it was given, and how: batched (addJson) or alone. */
  const recorder = () => {
    const added: [string, string, 'batched' | 'alone'][] = [];
    return {
      added,
      batcher: {
        addJson: (account: string, json: string) => added.push([account, json, 'batched']),
        addAlone: (account: string, json: string) => added.push([account, json, 'alone']),
      },
    };
  };

  it('adds one record per outcome under its account, after the outcome is known', async () => {
    const { added, batcher } = recorder();
    const deliver = withStatusEvents(batcher, async (_target: Target, id: string) => queued(id));
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

  it('a topic copy that failed for now leaves no record (its chunk comes back); a refused or queued one does', async () => {
    const { added, batcher } = recorder();
    const copy: Target = { ...plain, topic: { name: 'project.42', id: 'topic-event-1' } };
    const answers: Outcome[] = [
      notDelivered(new HeraldError('unavailable', 'down'), 'c1'),
      notDelivered(new HeraldError('queue_full', 'full', { field: 'recipient' }), 'c2'),
      queued('c3'),
    ];
    const deliver = withStatusEvents(batcher, async () => answers.shift() ?? queued('none'));
    await expect(deliver(copy, 'c1', 'c1')).resolves.toMatchObject({ kind: 'failed' });
    expect(added).toHaveLength(0);
    await deliver(copy, 'c2', 'c2');
    await deliver(copy, 'c3', 'c3');
    expect(added.map(([, json]) => JSON.parse(json))).toMatchObject([
      { status: 'failed', reason: 'queue_full', topic_id: 'topic-event-1' },
      { status: 'pending', topic_id: 'topic-event-1' },
    ]);
    // A direct event's failure is still recorded.
    const direct = withStatusEvents(batcher, async (_t: Target, id: string) =>
      notDelivered(new HeraldError('unavailable', 'down'), id),
    );
    await direct(plain, 'd1', 'd1');
    expect(JSON.parse(added.at(-1)?.[1] ?? '')).toMatchObject({ id: 'd1', status: 'failed' });
  });

  it('a --webhook-payload key: sent and pending records carry the payload text and go alone', async () => {
    const { added, batcher } = recorder();
    const flagged: Target = { ...plain, key: { ...plain.key, webhook_payload: true } };
    for (const outcome of [sent('e1'), queued('e2')]) {
      const deliver = withStatusEvents(
        batcher,
        async () => outcome,
        () => 1_048_576,
      );
      await deliver(flagged, outcome.id ?? '', outcome.id ?? '');
    }
    expect(added.map(([, , how]) => how)).toEqual(['alone', 'alone']);
    for (const [account, json] of added) {
      expect(account).toBe('acct_7f3a');
      const record = StatusEvent.parse(JSON.parse(json));
      expect(record.payload_json).toBe(PAYLOAD.toString('utf8'));
      expect(JSON.parse(record.payload_json ?? '')).toEqual({ title: 'hé "you"', n: 1 });
    }
  });

  it('a --webhook-payload key: a failure, or a record past max_payload, goes batched without it', async () => {
    const { added, batcher } = recorder();
    const flagged: Target = { ...plain, key: { ...plain.key, webhook_payload: true } };
    const failed = notDelivered(new HeraldError('unavailable', 'down'), 'e3');
    await withStatusEvents(
      batcher,
      async () => failed,
      () => 1_048_576,
    )(flagged, 'e3', 'e3');
    const size = Buffer.byteLength(aloneRecord(sent('e4'), flagged, 'e4', AT, 1e9) ?? '');
    for (const [max, how] of [
      [size, 'alone'],
      [size - 1, 'batched'],
    ] as const) {
      added.length = 0;
      const deliver = withStatusEvents(
        batcher,
        async () => sent('e4'),
        () => max,
      );
      await deliver(flagged, 'e4', 'e4');
      expect(added.map(([, , h]) => h)).toEqual([how]);
      expect('payload_json' in JSON.parse(added[0]?.[1] ?? '')).toBe(how === 'alone');
    }
  });

  const pushKey = { ...plain.key, push: { after_ms: 30_000, ttl_s: 3600 } };
  const deliverAs = (batcher: ReturnType<typeof recorder>['batcher'], outcome: Outcome) =>
    withStatusEvents(
      batcher,
      async () => outcome,
      () => 1_048_576,
    );

  it('a push key: its pending record carries the push spec and goes alone; its sent and failed records are the plain ones', async () => {
    const { added, batcher } = recorder();
    const target: Target = { ...plain, key: pushKey };
    await deliverAs(batcher, queued('e6'))(target, 'e6', 'e6');
    const [[, pending, how] = []] = added;
    expect(how).toBe('alone');
    const record = StatusEvent.parse(JSON.parse(pending ?? ''));
    expect(record.status).toBe('pending');
    // No event push field and no key template: the default title; the payload for Web Push.
    expect(record.push).toEqual({
      after_ms: 30_000,
      ttl_s: 3600,
      title: PUSH_DEFAULT_TITLE,
      payload_json: PAYLOAD.toString('utf8'),
    });
    expect(record.payload_json).toBeUndefined();
    added.length = 0;
    const failed = notDelivered(new HeraldError('unavailable', 'down'), 'e8');
    for (const outcome of [sent('e7'), failed]) {
      const id = outcome.id ?? '';
      await deliverAs(batcher, outcome)(target, id, id);
    }
    expect(added.map(([, , h]) => h)).toEqual(['batched', 'batched']);
    expect(added[0]?.[1]).toBe(
      statusJson(sent('e7'), plain, 'e7', JSON.parse(added[0]?.[1] ?? '').at),
    );
    expect(added[1]?.[1]).not.toContain('"push"');
  });

  it('a push key: the event’s push field wins over the key’s template, which wins over the default', async () => {
    const { added, batcher } = recorder();
    const templated = {
      ...pushKey,
      push: { ...pushKey.push, title: 'Key title', body: 'Key body' },
    };
    const event = { title: 'Order 7', url: 'https://shop.example/o/7', icon: '/i.png' };
    await deliverAs(batcher, queued('e9'))({ ...plain, key: templated }, 'e9', 'e9');
    await deliverAs(batcher, queued('e10'))(
      { ...plain, key: templated, push: event },
      'e10',
      'e10',
    );
    const [fromKey, fromEvent] = added.map(([, json]) => StatusEvent.parse(JSON.parse(json)).push);
    expect(fromKey).toMatchObject({ title: 'Key title', body: 'Key body' });
    // The event's content whole: its own title, no body of the key's beside it.
    expect(fromEvent).toMatchObject(event);
    expect(fromEvent?.body).toBeUndefined();
  });

  it('a push key: the payload rides in the spec up to PUSH_PAYLOAD_JSON_MAX characters, not one more', async () => {
    const { added, batcher } = recorder();
    const sized = (n: number) => Buffer.from(JSON.stringify('x'.repeat(n - 2)));
    for (const n of [PUSH_PAYLOAD_JSON_MAX, PUSH_PAYLOAD_JSON_MAX + 1]) {
      await deliverAs(batcher, queued(`s${n}`))(
        { ...plain, key: pushKey, payload: sized(n) },
        'e',
        'e',
      );
    }
    const [fits, over] = added.map(([, json]) => StatusEvent.parse(JSON.parse(json)).push);
    expect(fits?.payload_json).toHaveLength(PUSH_PAYLOAD_JSON_MAX);
    expect(over).toBeDefined();
    expect(over?.payload_json).toBeUndefined();
  });

  it('a key with push and webhook_payload: pending carries both, sent the payload only; past max_payload the push spec stays', async () => {
    const { added, batcher } = recorder();
    const both: Target = { ...plain, key: { ...pushKey, webhook_payload: true } };
    await deliverAs(batcher, queued('e11'))(both, 'e11', 'e11');
    await deliverAs(batcher, sent('e12'))(both, 'e12', 'e12');
    const [pending, live] = added.map(([, json]) => StatusEvent.parse(JSON.parse(json)));
    expect(added.map(([, , h]) => h)).toEqual(['alone', 'alone']);
    expect(pending?.payload_json).toBe(PAYLOAD.toString('utf8'));
    expect(pending?.push?.title).toBe(PUSH_DEFAULT_TITLE);
    expect(live?.payload_json).toBe(PAYLOAD.toString('utf8'));
    expect(live?.push).toBeUndefined();
    // Room for the record with its push spec, not for the payload's copy beside it.
    const pushOnly = aloneRecord(queued('e13'), { ...both, key: pushKey }, 'e13', AT, 1e9) ?? '';
    const max = Buffer.byteLength(pushOnly);
    expect(aloneRecord(queued('e13'), both, 'e13', AT, max)).toBe(pushOnly);
    expect(aloneRecord(queued('e13'), both, 'e13', AT, max - 1)).toBeUndefined();
  });

  it('without the flag, the record is the batched one, byte for byte', async () => {
    const { added, batcher } = recorder();
    for (const target of [
      plain,
      { ...plain, key: { ...plain.key, webhook_payload: false } },
      // An event's push field on a key without push settings changes nothing (issue 40).
      { ...plain, push: { title: 'ignored' } },
    ]) {
      await withStatusEvents(
        batcher,
        async () => sent('e5'),
        () => 1_048_576,
      )(target, 'e5', 'e5');
    }
    for (const [, json, how] of added) {
      expect(how).toBe('batched');
      expect(json).toBe(statusJson(sent('e5'), plain, 'e5', JSON.parse(json).at));
      expect(json).not.toContain('payload_json');
    }
  });
});
