import { HeraldError } from '@herald/proto';
import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { createAnswer } from '../answer.js';
import { createIngressMetrics } from '../metrics.js';
import { notDelivered, type Outcome, queued, sent } from '../outcome.js';
import { batchAnswerJson, itemOf } from './batch-idempotency.js';

const results: Outcome[] = [
  sent('7d9f0c3e-0000-4000-8000-000000000001'),
  queued('7d9f0c3e-0000-4000-8000-000000000002'),
  notDelivered(
    new HeraldError('queue_full', 'This recipient already has "10" queued events', {
      field: 'recipient',
    }),
  ),
  notDelivered(new HeraldError('unavailable', 'retry shortly')),
  notDelivered(new HeraldError('rate_limited', 'slow down', { retryAfter: 3 })),
  queued('an id with "quotes" and \\ and \u2028'),
];

describe('batchAnswerJson', () => {
  it('writes the same text as JSON.stringify of the items', () => {
    expect(batchAnswerJson(results)).toBe(JSON.stringify({ results: results.map(itemOf) }));
    expect(batchAnswerJson(results.slice(0, 1))).toBe(
      JSON.stringify({ results: results.slice(0, 1).map(itemOf) }),
    );
  });

  it('appends the NATS reply http_status after the results', () => {
    expect(batchAnswerJson(results, ',"http_status":200')).toBe(
      JSON.stringify({ results: results.map(itemOf), http_status: 200 }),
    );
  });
});

describe('answer.batch', () => {
  it('counts and observes each event as answer does one by one', async () => {
    const one = new Registry();
    const answerOne = createAnswer(createIngressMetrics(one));
    const many = new Registry();
    const answerMany = createAnswer(createIngressMetrics(many));
    for (const result of results) answerOne('http', result, performance.now());
    answerMany.batch('http', results, performance.now());
    const values = async (registry: Registry) =>
      (await registry.getMetricsAsJSON()).map((m) => ({
        name: m.name,
        values: (
          m as { values: { labels: { le?: unknown }; value: number; metricName?: string }[] }
        ).values
          // Which bucket an observation falls in is the time it took, not what was counted: only
          // the +Inf bucket (every observation) is the same in both.
          .filter(
            (v) =>
              !v.metricName?.endsWith('_sum') &&
              !(v.metricName?.endsWith('_bucket') && v.labels.le !== '+Inf'),
          )
          .map((v) => ({ labels: v.labels, value: v.value, metricName: v.metricName })),
      }));
    const counted = await values(many);
    expect(counted).toEqual(await values(one));
    const dispatches = counted.find((m) => m.name === 'herald_dispatch_total');
    expect(dispatches?.values).toContainEqual({
      labels: { transport: 'http', outcome: 'queued' },
      value: 2,
      metricName: undefined,
    });
  });
});
