import type { Logger } from '@herald/kit';
import type { TurnPublisher } from '@herald/nats';
import { accountOfDispatchSubject, type DispatchReply, HeraldError, subjects } from '@herald/proto';
import { Match, type Msg, type MsgHdrs, type NatsConnection, headers as natsHeaders } from 'nats';
import { type Answer, outcomeOfError } from './answer.js';
import type { Dispatch } from './dispatch.js';
import { type NatsDispatchServer, serveIngressRequests } from './nats-service.js';
import { type HttpAnswer, type Outcome, toHttp } from './outcome.js';

export interface NatsDispatchOptions {
  /** Most bytes a body may have: PAYLOAD_LIMIT_BYTES + BODY_OVERHEAD_BYTES, as over HTTP. */
  bodyLimitBytes: number;
  logger: Logger;
  /** Counts each dispatch's outcome once (the dispatch's last step). */
  answer: Answer;
  /**
   * The pipeline's turn publisher: replies leave at the end of the loop turn, so the dispatches
   * that complete in one turn (their edges' replies arrive together) share one socket write with
   * each other and with the turn's other messages.
   */
  publisher: TurnPublisher;
}

export type { NatsDispatchServer } from './nats-service.js';

/**
 * The NATS transport: `rt.dispatch.<account>` requests, served by one ingress instance each
 * (queue group), answered with the HTTP body plus `http_status`.
 */
export function serveNatsDispatch(
  nc: NatsConnection,
  dispatch: Dispatch,
  opts: NatsDispatchOptions,
): NatsDispatchServer {
  /**
   * The NATS transport's one error boundary: a thrown error goes through kit's one mapping, and
   * every dispatch is counted once, as over HTTP.
   */
  async function handle(msg: Msg): Promise<void> {
    const started = performance.now();
    let outcome: Outcome;
    try {
      outcome = await outcomeOf(msg);
    } catch (err) {
      outcome = outcomeOfError(err, opts.logger, { transport: 'nats' });
    }
    reply(msg, toHttp(opts.answer('nats', outcome, started)));
  }

  async function outcomeOf(msg: Msg): Promise<Outcome> {
    const account = accountOfDispatchSubject(msg.subject);
    if (account === undefined) {
      throw new HeraldError(
        'invalid_field',
        `${msg.subject} is not a dispatch subject: publish to rt.dispatch.<account id>`,
        { field: 'subject' },
      );
    }
    if (msg.data.byteLength > opts.bodyLimitBytes) {
      throw new HeraldError(
        'payload_too_large',
        `The body is larger than ${opts.bodyLimitBytes} bytes (PAYLOAD_LIMIT_BYTES + BODY_OVERHEAD_BYTES): send a smaller payload`,
        { field: 'body' },
      );
    }
    return dispatch({
      body: msg.data,
      origin: header(msg, 'Origin'),
      idempotencyKey: header(msg, 'Idempotency-Key'),
      subjectAccount: account,
    });
  }

  const replyFailed = (err: unknown) =>
    opts.logger.warn({ err: String(err) }, 'could not reply to a dispatch');

  function reply(msg: Msg, answer: HttpAnswer): void {
    if (!msg.reply) return;
    let headers: MsgHdrs | undefined;
    if (answer.retryAfter !== undefined) {
      headers = natsHeaders();
      headers.set('Retry-After', String(answer.retryAfter));
    }
    opts.publisher.publish(
      msg.reply,
      Buffer.from(replyJson(answer)),
      headers ? { headers } : undefined,
      replyFailed,
    );
  }

  return serveIngressRequests(nc, subjects.dispatchAll, opts.logger, handle);
}

/**
 * The reply body ({@link DispatchReply}): the HTTP body plus `http_status`, last. Spliced into the body's JSON rather
 * than spread into a copy of it (an object spread per dispatch was measurable).
 */
export function replyJson(answer: HttpAnswer): string {
  const body = JSON.stringify(answer.body);
  return body === '{}'
    ? `{"http_status":${answer.status}}`
    : `${body.slice(0, -1)},"http_status":${answer.status}}`;
}

/** A header's value, case-insensitively; undefined when absent, '' when sent empty. */
function header(msg: Msg, name: string): string | undefined {
  if (!msg.headers?.has(name, Match.IgnoreCase)) return undefined;
  return msg.headers.get(name, Match.IgnoreCase);
}
