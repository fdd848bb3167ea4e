import type { Logger, SecretBox } from '@herald/kit';
import {
  type AuthVerifyReply,
  AuthVerifyRequest,
  errorReply,
  HeraldError,
  type PlanCatalogue,
  queueGroups,
  subjects,
} from '@herald/proto';
import type { Kysely } from 'kysely';
import { JSONCodec, type Msg, type NatsConnection } from 'nats';
import type { AuthDb } from './db-schema.js';
import type { AuthMetrics, VerifyResult } from './metrics.js';
import { verifyKeyHash } from './verification.js';

export interface VerifyResponderDeps {
  nc: NatsConnection;
  db: Kysely<AuthDb>;
  catalogue: PlanCatalogue;
  logger: Logger;
  metrics?: AuthMetrics;
  /** Epoch ms; injectable for tests. */
  now?: () => number;
  /** DASHBOARD_MAX_CONNECTIONS (verification.ts); its default when absent. */
  dashboardConnections?: number;
  /** Opens signing secrets for the edge (SECRET_ENCRYPTION_KEY); absent: token keys fail. */
  box?: SecretBox | undefined;
}

export interface VerifyResponder {
  /** Stops taking requests, answers those already received, then resolves. */
  drain(): Promise<void>;
}

const codec = JSONCodec();

const MALFORMED: AuthVerifyReply = errorReply(
  new HeraldError(
    'invalid_api_key',
    'the rt.auth.verify request was malformed: send {"v":1,"key_hash":"<SHA-256 of the key, 64 lower-case hex characters>"}',
  ),
);

const INTERNAL: AuthVerifyReply = errorReply(
  new HeraldError('internal', 'key verification failed inside Herald: retry shortly'),
);

/**
 * Answers `rt.auth.verify` in the `herald-auth` queue group, so each request is served by one
 * auth instance. Only key hashes cross NATS, and neither keys nor hashes are logged. A bad
 * request or a database failure gets an error reply; nothing a caller sends can stop the
 * responder.
 */
export function startVerifyResponder(deps: VerifyResponderDeps): VerifyResponder {
  const { nc, db, catalogue, logger, metrics } = deps;
  const now = deps.now ?? Date.now;
  const inflight = new Set<Promise<void>>();

  const handle = async (msg: Msg): Promise<void> => {
    const started = process.hrtime.bigint();
    const { reply, result } = await answer(msg);
    if (msg.reply) {
      msg.respond(codec.encode(reply));
    } else {
      logger.debug('rt.auth.verify request without a reply subject: nothing to answer');
    }
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    metrics?.verifications.inc({ result });
    metrics?.verifyDuration.observe({ result }, seconds);
  };

  const answer = async (msg: Msg): Promise<{ reply: AuthVerifyReply; result: VerifyResult }> => {
    const request = AuthVerifyRequest.safeParse(decode(msg.data));
    if (!request.success) return { reply: MALFORMED, result: 'malformed' };
    try {
      return await verifyKeyHash(
        { db, catalogue, dashboardConnections: deps.dashboardConnections, box: deps.box },
        request.data.key_hash,
        now(),
        request.data.signing_secrets === true,
      );
    } catch (err) {
      // A database error, or a signing secret that cannot be opened (no or another
      // SECRET_ENCRYPTION_KEY); neither the secret nor its sealed form is ever in the message.
      logger.error({ err: describe(err) }, 'key verification failed');
      return { reply: INTERNAL, result: 'internal' };
    }
  };

  const sub = nc.subscribe(subjects.authVerify, {
    queue: queueGroups.auth,
    callback: (err, msg) => {
      if (err) {
        logger.error({ err: err.message }, 'rt.auth.verify subscription error');
        return;
      }
      const task = handle(msg).catch((e: unknown) => {
        logger.error({ err: describe(e) }, 'rt.auth.verify reply failed');
      });
      inflight.add(task);
      void task.finally(() => inflight.delete(task));
    },
  });
  logger.info(
    { subject: subjects.authVerify, queue: queueGroups.auth },
    'answering key verifications',
  );

  return {
    async drain() {
      if (!sub.isClosed()) await sub.drain();
      await Promise.all(inflight);
    },
  };
}

function decode(data: Uint8Array): unknown {
  try {
    return codec.decode(data);
  } catch {
    return undefined;
  }
}

function describe(err: unknown): { name: string; code?: string; message: string } {
  if (!(err instanceof Error)) return { name: 'Error', message: String(err) };
  const code = (err as { code?: unknown }).code;
  // A driver message could quote a parameter, and the only parameter here is a key hash.
  const message = err.message.replace(/[0-9a-f]{64}/gi, '[redacted]');
  return { name: err.name, message, ...(typeof code === 'string' ? { code } : {}) };
}
