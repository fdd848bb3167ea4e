import type { Logger } from '@herald/kit';
import {
  accountOfDispatchSubject,
  type DispatchReply,
  HeraldError,
  queueGroups,
  subjects,
} from '@herald/proto';
import {
  Match,
  type Msg,
  type MsgHdrs,
  type NatsConnection,
  headers as natsHeaders,
  type Subscription,
} from 'nats';
import type { Dispatcher } from './dispatch.js';
import { decodeBody } from './parse-request.js';
import type { DispatchResult } from './results.js';

export interface NatsDispatchOptions {
  /** Most bytes a body may have: PAYLOAD_LIMIT_BYTES + BODY_OVERHEAD_BYTES, as over HTTP. */
  bodyLimitBytes: number;
  logger: Logger;
}

export interface NatsDispatchServer {
  /** Stops taking new dispatches and resolves once every one in flight has been answered. */
  close(): Promise<void>;
}

/**
 * The NATS transport: `rt.dispatch.<account>` requests, served by one ingress instance each
 * (queue group), answered with the HTTP body plus `http_status`.
 */
export function serveNatsDispatch(
  nc: NatsConnection,
  dispatcher: Dispatcher,
  opts: NatsDispatchOptions,
): NatsDispatchServer {
  const inFlight = new Set<Promise<void>>();
  const sub: Subscription = nc.subscribe(subjects.dispatchAll, {
    queue: queueGroups.ingress,
    callback: (err, msg) => {
      if (err) {
        opts.logger.warn({ err: String(err) }, 'dispatch subscription error');
        return;
      }
      // Handled concurrently: one slow live push (up to LIVE_TIMEOUT_MS) must not hold up the rest.
      const task = handle(msg).finally(() => inFlight.delete(task));
      inFlight.add(task);
    },
  });

  async function handle(msg: Msg): Promise<void> {
    reply(msg, await resultOf(msg));
  }

  async function resultOf(msg: Msg): Promise<DispatchResult> {
    const account = accountOfDispatchSubject(msg.subject);
    if (account === undefined) {
      return dispatcher.refuse(
        'nats',
        new HeraldError(
          'invalid_field',
          `${msg.subject} is not a dispatch subject: publish to rt.dispatch.<account id>`,
          {
            field: 'subject',
          },
        ),
      );
    }
    if (msg.data.byteLength > opts.bodyLimitBytes) {
      return dispatcher.refuse(
        'nats',
        new HeraldError(
          'payload_too_large',
          `The body is larger than ${opts.bodyLimitBytes} bytes (PAYLOAD_LIMIT_BYTES + BODY_OVERHEAD_BYTES): send a smaller payload`,
          { field: 'body' },
        ),
      );
    }
    let body: string;
    try {
      body = decodeBody(msg.data);
    } catch (err) {
      if (err instanceof HeraldError) return dispatcher.refuse('nats', err);
      throw err;
    }
    return dispatcher.dispatch({
      body,
      origin: header(msg, 'Origin'),
      idempotencyKey: header(msg, 'Idempotency-Key'),
      transport: 'nats',
      subjectAccount: account,
    });
  }

  function reply(msg: Msg, result: DispatchResult): void {
    if (!msg.reply) return;
    const body = { ...result.body, http_status: result.status } as DispatchReply;
    let headers: MsgHdrs | undefined;
    if (result.retryAfter !== undefined) {
      headers = natsHeaders();
      headers.set('Retry-After', String(result.retryAfter));
    }
    try {
      msg.respond(JSON.stringify(body), headers ? { headers } : undefined);
    } catch (err) {
      opts.logger.warn({ err: String(err) }, 'could not reply to a dispatch');
    }
  }

  return {
    async close() {
      if (!sub.isClosed()) await sub.drain();
      await Promise.allSettled([...inFlight]);
    },
  };
}

/** A header's value, case-insensitively; undefined when absent, '' when sent empty. */
function header(msg: Msg, name: string): string | undefined {
  if (!msg.headers?.has(name, Match.IgnoreCase)) return undefined;
  return msg.headers.get(name, Match.IgnoreCase);
}
