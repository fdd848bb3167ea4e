import type { Logger } from '@herald/kit';
import { queueGroups } from '@herald/proto';
import { JSONCodec, type Msg, type NatsConnection } from 'nats';

/** A responder auth runs on NATS: drained at shutdown. */
export interface QueueResponder {
  /** Stops taking requests, answers those already received, then resolves. */
  drain(): Promise<void>;
}

const codec = JSONCodec();

/**
 * Serves `subject` in the `herald-auth` queue group, so each request is answered by one auth
 * instance: `answer` builds the reply (it must not throw for a caller's input), which is sent when
 * the request has a reply subject, then `after` records it (metrics). Requests in flight are kept
 * for {@link QueueResponder.drain}; a failure is logged through `describe`, which must redact what
 * a driver message could quote (key hashes, app keys). Used by `rt.auth.verify` and
 * `rt.auth.pusher`.
 */
export function serveAuthRequests<R>(opts: {
  nc: NatsConnection;
  logger: Logger;
  subject: string;
  /** What the log line says is being answered ("key verifications", …). */
  what: string;
  answer: (msg: Msg) => Promise<R>;
  reply: (result: R) => unknown;
  after?: (result: R) => void;
  describe: (err: unknown) => unknown;
}): QueueResponder {
  const { nc, logger, subject } = opts;
  const inflight = new Set<Promise<void>>();
  const handle = async (msg: Msg): Promise<void> => {
    const result = await opts.answer(msg);
    if (msg.reply) msg.respond(codec.encode(opts.reply(result)));
    else logger.debug(`${subject} request without a reply subject: nothing to answer`);
    opts.after?.(result);
  };
  const sub = nc.subscribe(subject, {
    queue: queueGroups.auth,
    callback: (err, msg) => {
      if (err) {
        logger.error({ err: err.message }, `${subject} subscription error`);
        return;
      }
      const task = handle(msg).catch((e: unknown) => {
        logger.error({ err: opts.describe(e) }, `${subject} reply failed`);
      });
      inflight.add(task);
      void task.finally(() => inflight.delete(task));
    },
  });
  logger.info({ subject, queue: queueGroups.auth }, `answering ${opts.what}`);
  return {
    async drain() {
      if (!sub.isClosed()) await sub.drain();
      await Promise.all(inflight);
    },
  };
}

/** A request's JSON, or undefined when it is not JSON (the schema then refuses it). */
export function decodeRequest(data: Uint8Array): unknown {
  try {
    return codec.decode(data);
  } catch {
    return undefined;
  }
}
