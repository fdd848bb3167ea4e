import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  batchBody,
  connectionToken,
  personalChannel,
  publishBody,
  readFrame,
} from './centrifugo-wire.js';

describe("Centrifugo's wire, as the bench speaks it", () => {
  it('signs an HS256 connection token whose sub is the recipient', () => {
    const token = connectionToken('secret', 'r-1', 1_000_000);
    const [head, claims, sig] = token.split('.') as [string, string, string];
    expect(JSON.parse(Buffer.from(head, 'base64url').toString())).toEqual({
      alg: 'HS256',
      typ: 'JWT',
    });
    expect(JSON.parse(Buffer.from(claims, 'base64url').toString())).toEqual({
      sub: 'r-1',
      exp: 1000 + 4 * 3600,
    });
    expect(sig).toBe(
      createHmac('sha256', 'secret').update(`${head}.${claims}`).digest('base64url'),
    );
  });

  it("publishes the payload's text verbatim to the personal channel", () => {
    expect(publishBody('r-1', '{"seq":"1"}')).toBe(
      '{"channel":"personal:#r-1","data":{"seq":"1"}}',
    );
    expect(JSON.parse(batchBody([{ recipient: 'a', payloadJson: '{"k":1}' }]))).toEqual({
      commands: [{ publish: { channel: personalChannel('a'), data: { k: 1 } } }],
      parallel: true,
    });
  });

  it('answers pings, reads every message of a joined frame, and the replayed history of a connect reply', () => {
    const sent: string[] = [];
    const pubs: unknown[] = [];
    const replies: unknown[] = [];
    const frame = [
      '{}',
      '{"push":{"channel":"personal:#a","pub":{"data":{"seq":"7"},"offset":3}}}',
      '{"id":1,"connect":{"client":"c","subs":{"personal:#a":{"recovered":true,"publications":[{"data":{"seq":"1"}},{"data":{"seq":"2"}}]}}}}',
    ].join('\n');
    readFrame(
      Buffer.from(frame),
      (t) => sent.push(t),
      (d) => pubs.push(d),
      (r) => replies.push(r),
    );
    expect(sent).toEqual(['{}']);
    expect(pubs).toEqual([{ seq: '7' }, { seq: '1' }, { seq: '2' }]);
    expect(replies).toEqual([{ recovered: [{ seq: '1' }, { seq: '2' }], complete: true }]);
  });

  it('turns a refused connect into an error', () => {
    const replies: unknown[] = [];
    readFrame(
      Buffer.from('{"id":1,"error":{"code":109,"message":"token expired"}}'),
      () => {},
      () => {},
      (r) => replies.push(r),
    );
    expect(replies[0]).toBeInstanceOf(Error);
    expect(String(replies[0])).toContain('109 token expired');
  });
});
