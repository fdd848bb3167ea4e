import { DispatchReply, HeraldError } from '@herald/proto';
import { describe, expect, it } from 'vitest';
import { replyJson } from './nats-dispatch.js';
import { notDelivered, queued, sent, toHttp } from './outcome.js';

describe('replyJson', () => {
  it('is the body with http_status added last, as a spread of the body would be', () => {
    const results = [
      sent('0b6c3f1e-8a0d-4c1e-9f7a-2f4d5e6a7b8c'),
      queued('0b6c3f1e-8a0d-4c1e-9f7a-2f4d5e6a7b8c'),
      notDelivered(
        new HeraldError('queue_full', 'A "quoted" message\nwith a newline', { field: 'recipient' }),
      ),
      notDelivered(new HeraldError('unavailable', 'retry shortly')),
    ].map(toHttp);
    for (const result of results) {
      const text = replyJson(result);
      expect(text).toBe(JSON.stringify({ ...result.body, http_status: result.status }));
      expect(DispatchReply.safeParse(JSON.parse(text)).success).toBe(true);
    }
  });

  it('makes valid JSON of an empty body', () => {
    expect(JSON.parse(replyJson({ status: 500, body: {} } as never))).toEqual({ http_status: 500 });
  });
});
