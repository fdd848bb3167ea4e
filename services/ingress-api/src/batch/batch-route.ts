import { sourceAddress } from '@herald/kit';
import { HeraldError } from '@herald/proto';
import type { Context, Middleware } from 'koa';
import type { Answer } from '../answer.js';
import { checkJsonRequest, readJsonBody } from '../http-body.js';
import type { DispatchBatch } from './batch.js';
import { batchAnswerJson } from './batch-idempotency.js';

export interface BatchRouteOptions {
  /** Most bytes a batch body may have (BATCH_MAX_BYTES). */
  bodyLimitBytes: number;
  /** Counts each event's outcome once, as a single dispatch's. */
  answer: Answer;
  /** Proxies in front that append to X-Forwarded-For (TRUSTED_PROXY_HOPS); 0 by default. */
  trustedProxyHops?: number;
}

/**
 * `POST /notify/batch` and its alias: reads the raw body's bytes and hands them to the batch path.
 * A batch that was taken answers 200 with one result per event; a refused request throws to the
 * app's error boundary, which answers and counts it as a single dispatch's refusal.
 */
export function batchRoute(dispatchBatch: DispatchBatch, opts: BatchRouteOptions): Middleware {
  return async (ctx) => {
    const started = performance.now();
    checkJsonRequest(
      ctx.get('Content-Type') || undefined,
      ctx.get('Content-Encoding') || undefined,
    );
    const body = await readJsonBody(ctx.req, opts.bodyLimitBytes).catch((err: unknown) => {
      if (!(err instanceof HeraldError) || err.code !== 'payload_too_large') throw err;
      // The rest of an oversized body is not worth reading just to keep the connection alive.
      ctx.set('Connection', 'close');
      throw new HeraldError(
        'payload_too_large',
        `The body is larger than ${opts.bodyLimitBytes} bytes (BATCH_MAX_BYTES): split the events into smaller batches`,
        { field: 'body' },
      );
    });
    const outcomes = await dispatchBatch({
      body,
      origin: ctx.get('Origin') || undefined,
      idempotencyKey: header(ctx, 'idempotency-key'),
      source: sourceAddress(ctx.req, opts.trustedProxyHops ?? 0),
    });
    opts.answer.batch('http', outcomes, started);
    ctx.status = 200;
    ctx.type = 'application/json';
    ctx.body = batchAnswerJson(outcomes);
  };
}

/** A header's value, distinguishing absent (undefined) from sent empty (''). */
function header(ctx: Context, name: string): string | undefined {
  const value = ctx.req.headers[name];
  return Array.isArray(value) ? value.join(', ') : value;
}
