import type { Logger } from '@herald/kit';
import {
  accountOfDispatchBatchSubject,
  type BatchReply,
  HeraldError,
  subjects,
} from '@herald/proto';
import { Match, type Msg, type MsgHdrs, type NatsConnection, headers as natsHeaders } from 'nats';
import { type Answer, outcomeOfError } from '../answer.js';
import { type NatsDispatchServer, serveIngressRequests } from '../nats-service.js';
import { toHttp } from '../outcome.js';
import type { DispatchBatch } from './batch.js';
import { batchAnswerJson } from './batch-idempotency.js';

export interface NatsBatchOptions {
  /** Most bytes a batch body may have (BATCH_MAX_BYTES), as over HTTP. */
  bodyLimitBytes: number;
  logger: Logger;
  /** Counts each event's outcome once, as a single dispatch's. */
  answer: Answer;
}

/**
 * The NATS transport of batches: `rt.dispatch.batch.<account>` requests, served by one ingress
 * instance each (the ingress queue group), answered with the HTTP body plus `http_status`.
 */
export function serveNatsBatch(
  nc: NatsConnection,
  dispatchBatch: DispatchBatch,
  opts: NatsBatchOptions,
): NatsDispatchServer {
  /** This transport's one error boundary: a refused batch is answered and counted once. */
  async function handle(msg: Msg): Promise<void> {
    const started = performance.now();
    let reply: BatchReply | string;
    let retryAfter: number | undefined;
    try {
      const outcomes = await outcomesOf(msg);
      opts.answer.batch('nats', outcomes, started);
      // `{ results: outcomes.map(itemOf), http_status: 200 }` as JSON text.
      reply = batchAnswerJson(outcomes, ',"http_status":200');
    } catch (err) {
      const refused = toHttp(
        opts.answer('nats', outcomeOfError(err, opts.logger, { transport: 'nats-batch' }), started),
      );
      reply = { ...refused.body, http_status: refused.status } as BatchReply;
      retryAfter = refused.retryAfter;
    }
    respond(msg, reply, retryAfter);
  }

  async function outcomesOf(msg: Msg) {
    const account = accountOfDispatchBatchSubject(msg.subject);
    if (account === undefined) {
      throw new HeraldError(
        'invalid_field',
        `${msg.subject} is not a batch dispatch subject: publish to rt.dispatch.batch.<account id>`,
        { field: 'subject' },
      );
    }
    if (msg.data.byteLength > opts.bodyLimitBytes) {
      throw new HeraldError(
        'payload_too_large',
        `The body is larger than ${opts.bodyLimitBytes} bytes (BATCH_MAX_BYTES): split the events into smaller batches`,
        { field: 'body' },
      );
    }
    return dispatchBatch({
      body: msg.data,
      origin: header(msg, 'Origin'),
      idempotencyKey: header(msg, 'Idempotency-Key'),
      subjectAccount: account,
    });
  }

  function respond(msg: Msg, reply: BatchReply | string, retryAfter: number | undefined): void {
    if (!msg.reply) return;
    let headers: MsgHdrs | undefined;
    if (retryAfter !== undefined) {
      headers = natsHeaders();
      headers.set('Retry-After', String(retryAfter));
    }
    try {
      msg.respond(
        typeof reply === 'string' ? reply : JSON.stringify(reply),
        headers ? { headers } : undefined,
      );
    } catch (err) {
      opts.logger.warn({ err: String(err) }, 'could not reply to a batch dispatch');
    }
  }

  return serveIngressRequests(nc, subjects.dispatchBatchAll, opts.logger, handle);
}

/** A header's value, case-insensitively; undefined when absent, '' when sent empty. */
function header(msg: Msg, name: string): string | undefined {
  if (!msg.headers?.has(name, Match.IgnoreCase)) return undefined;
  return msg.headers.get(name, Match.IgnoreCase);
}
