import { HeraldError, parseNotifyRequest } from '@herald/proto';
import { describe, expect, it } from 'vitest';
import { acceptBatch } from './batch-accept.js';
import { scanBatchJson } from './batch-json.js';

const bytes = (text: string) => new TextEncoder().encode(text);
const text = (b: Uint8Array) => new TextDecoder().decode(b);
const R1 = '6f1c1b1e-3f0a-4c5e-9a7b-2d3c4e5f6a7b';
const R2 = '0b7e2f64-9d1c-4a3b-8e5f-1a2b3c4d5e6f';
const limits = { payloadLimitBytes: 16, maxEvents: 3 };
const batch = (events: string) =>
  bytes(`{"api_key":"hk_test_k","client":"web","events":${events}}`);

function refusal(fn: () => unknown): { code: string; field: string | undefined } {
  try {
    fn();
  } catch (err) {
    if (err instanceof HeraldError) return { code: err.code, field: err.field };
    throw err;
  }
  throw new Error('accepted');
}

describe('scanBatchJson', () => {
  it('validates the whole text as strictly as JSON.parse', () => {
    for (const bad of [
      '{"events":[{"a":1},]}',
      '{"events":[1 2]}',
      '{"events":[{"a":}]}',
      '{} x',
    ]) {
      expect(() => JSON.parse(bad)).toThrow(SyntaxError);
      expect(() => scanBatchJson(bytes(bad))).toThrow(SyntaxError);
    }
  });

  it('records each event of the events array, and the last events member wins', () => {
    const scanned = scanBatchJson(
      bytes('{"events":[1],"x":{"events":[]},"events":[ {"a":[1]} , "s" ]}'),
    );
    expect(scanned.kind).toBe('object');
    if (scanned.kind !== 'object') return;
    expect(scanned.events?.map((e) => e.kind)).toEqual(['object', 'string']);
  });

  it('has no events when the last events member is not an array', () => {
    const scanned = scanBatchJson(bytes('{"events":[1],"events":{}}'));
    expect(scanned.kind === 'object' && scanned.events).toBeUndefined();
  });
});

describe('acceptBatch', () => {
  it('carries each payload as the exact bytes sent, a view into the body', () => {
    const body = batch(
      `[{"recipient":"${R1.toUpperCase()}","payload":{ "n":1e400 }},{"payload":[],"recipient":"${R2}"}]`,
    );
    const accepted = acceptBatch({ body }, limits);
    expect(accepted.request).toEqual({ api_key: 'hk_test_k', client: 'web' });
    const [first, second] = accepted.events;
    expect(first?.ok && [first.recipient, text(first.payload)]).toEqual([R1, '{ "n":1e400 }']);
    expect(first?.ok && first.payload.buffer).toBe(body.buffer);
    expect(second?.ok && [second.recipient, text(second.payload)]).toEqual([R2, '[]']);
  });

  it('keeps a bad event in its slot with the code a single dispatch would answer', () => {
    const events = `[{"recipient":"nope","payload":1},{"recipient":"${R1}"},7,{"recipient":"${R1}","payload":"${'x'.repeat(16)}"}]`;
    const accepted = acceptBatch({ body: batch(events) }, { ...limits, maxEvents: 4 });
    expect(accepted.events.map((e) => (e.ok ? 'ok' : [e.error.code, e.error.field]))).toEqual([
      ['invalid_recipient', 'recipient'],
      ['missing_field', 'payload'],
      ['invalid_field', 'events[2]'],
      ['payload_too_large', 'payload'],
    ]);
  });

  it("takes or refuses each recipient exactly as the single dispatch's check does", () => {
    const recipients = [
      R1,
      R1.toUpperCase(),
      `${R1} `,
      R1.replace('-4', '-5'),
      R1.replace('-9', '-c'),
      '',
      7,
      null,
      [R1],
      { id: R1 },
    ];
    const events = recipients.map((r) => ({ recipient: r, payload: 1 }));
    const accepted = acceptBatch(
      { body: batch(JSON.stringify(events)) },
      { ...limits, maxEvents: events.length },
    );
    const single = recipients.map((recipient) => {
      try {
        const body = { recipient, payload: 1, api_key: 'hk_test_k', client: 'web' };
        return parseNotifyRequest(body).recipient;
      } catch (err) {
        return err instanceof HeraldError ? [err.code, err.field, err.message] : err;
      }
    });
    expect(
      accepted.events.map((e) =>
        e.ok ? e.recipient : [e.error.code, e.error.field, e.error.message],
      ),
    ).toEqual(single);
    expect(single.filter((r) => typeof r === 'string')).toEqual([R1, R1]);
  });

  const whole: Array<[string, string, string, string]> = [
    ['not JSON', '{"events":', 'invalid_json', 'body'],
    ['not an object', '[1]', 'invalid_json', 'body'],
    ['no api_key', `{"client":"web","events":[]}`, 'missing_api_key', 'api_key'],
    ['bad client', `{"api_key":"hk_test_k","client":"tv","events":[]}`, 'invalid_client', 'client'],
    ['no events', `{"api_key":"hk_test_k","client":"web"}`, 'missing_field', 'events'],
    [
      'events not an array',
      `{"api_key":"hk_test_k","client":"web","events":{}}`,
      'invalid_field',
      'events',
    ],
    [
      'events empty',
      `{"api_key":"hk_test_k","client":"web","events":[]}`,
      'invalid_field',
      'events',
    ],
  ];
  it.each(whole)('refuses the whole request: %s', (_name, body, code, field) => {
    expect(refusal(() => acceptBatch({ body: bytes(body) }, limits))).toEqual({ code, field });
  });

  it('takes exactly maxEvents events and refuses one more (413)', () => {
    const event = `{"recipient":"${R1}","payload":1}`;
    const of = (n: number) => batch(`[${Array(n).fill(event).join(',')}]`);
    expect(acceptBatch({ body: of(3) }, limits).events).toHaveLength(3);
    expect(refusal(() => acceptBatch({ body: of(4) }, limits))).toEqual({
      code: 'payload_too_large',
      field: 'events',
    });
  });

  it('refuses a bad Idempotency-Key whole', () => {
    const body = batch(`[{"recipient":"${R1}","payload":1}]`);
    expect(refusal(() => acceptBatch({ body, idempotencyKey: 'has space' }, limits))).toEqual({
      code: 'invalid_field',
      field: 'Idempotency-Key',
    });
  });
});
