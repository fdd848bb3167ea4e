import { DispatchStatus, HeraldError } from '@herald/proto';
import { describe, expect, it } from 'vitest';
import { notDelivered, type Outcome, outcomeOfHttp, queued, sent, toHttp } from './outcome.js';

const ID = '0b6c3f1e-8a0d-4c1e-9f7a-2f4d5e6a7b8c';

describe('notDelivered', () => {
  it('refuses on a 4xx and on 507 queue_full, fails on any other 5xx', () => {
    const kind = (err: HeraldError) => notDelivered(err).kind;
    expect(kind(new HeraldError('invalid_recipient', 'x', { field: 'recipient' }))).toBe('refused');
    expect(kind(new HeraldError('rate_limited', 'x', { retryAfter: 2 }))).toBe('refused');
    expect(kind(new HeraldError('queue_full', 'x'))).toBe('refused');
    expect(kind(new HeraldError('unavailable', 'x'))).toBe('failed');
    expect(kind(new HeraldError('internal', 'x'))).toBe('failed');
  });

  it('keeps the code and the event id', () => {
    const outcome = notDelivered(new HeraldError('queue_full', 'full'), ID);
    expect(outcome).toMatchObject({ kind: 'refused', id: ID, code: 'queue_full' });
  });
});

describe('toHttp', () => {
  it('answers the contract: 200 sent, 202 queued, with the id', () => {
    expect(toHttp(sent(ID))).toEqual({
      status: 200,
      body: { status: DispatchStatus.sent, id: ID },
    });
    expect(toHttp(queued(ID))).toEqual({
      status: 202,
      body: { status: DispatchStatus.queued, id: ID },
    });
  });

  it('answers a refusal with the error body, and its Retry-After when it has one', () => {
    const full = new HeraldError('queue_full', 'full', { field: 'recipient' });
    expect(toHttp(notDelivered(full, ID))).toEqual({ status: 507, body: full.toBody() });
    const limited = new HeraldError('rate_limited', 'slow down', { retryAfter: 3 });
    expect(toHttp(notDelivered(limited))).toEqual({
      status: 403,
      body: limited.toBody(),
      retryAfter: 3,
    });
  });

  it('answers 503 unavailable with the failed status text and always a Retry-After', () => {
    const down = new HeraldError('unavailable', 'retry shortly');
    expect(toHttp(notDelivered(down))).toEqual({
      status: 503,
      body: { status: DispatchStatus.failed, error: down.toBody().error },
      retryAfter: 1,
    });
    const later = new HeraldError('unavailable', 'retry later', { retryAfter: 5 });
    expect(toHttp(notDelivered(later)).retryAfter).toBe(5);
  });

  it('answers a bug with the internal error body and no Retry-After', () => {
    const bug = new HeraldError('internal', 'quote request id r-1');
    expect(toHttp(notDelivered(bug))).toEqual({ status: 500, body: bug.toBody() });
  });
});

describe('outcomeOfHttp', () => {
  it('replays what an Idempotency-Key stored as the same answer', () => {
    const stored: Outcome[] = [
      sent(ID),
      queued(ID),
      notDelivered(new HeraldError('queue_full', 'full', { field: 'recipient' }), ID),
      notDelivered(new HeraldError('invalid_recipient', 'bad', { field: 'recipient' })),
    ];
    for (const outcome of stored) {
      const { status, body } = toHttp(outcome);
      const replayed = outcomeOfHttp(status, JSON.parse(JSON.stringify(body)));
      expect(replayed.kind).toBe(outcome.kind);
      expect(toHttp(replayed)).toEqual(toHttp(outcome));
    }
  });
});
