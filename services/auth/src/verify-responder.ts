import type { Logger, SecretBox } from '@herald/kit';
import {
  type AuthVerifyReply,
  AuthVerifyRequest,
  errorReply,
  HeraldError,
  type PlanCatalogue,
  subjects,
} from '@herald/proto';
import type { Kysely } from 'kysely';
import type { Msg, NatsConnection } from 'nats';
import type { AuthDb } from './db-schema.js';
import type { AuthMetrics, VerifyResult } from './metrics.js';
import { decodeRequest, type QueueResponder, serveAuthRequests } from './queue-responder.js';
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

export type VerifyResponder = QueueResponder;

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

  const answer = async (msg: Msg): Promise<{ reply: AuthVerifyReply; result: VerifyResult }> => {
    const request = AuthVerifyRequest.safeParse(decodeRequest(msg.data));
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

  return serveAuthRequests({
    nc,
    logger,
    subject: subjects.authVerify,
    what: 'key verifications',
    answer: async (msg) => ({ started: process.hrtime.bigint(), ...(await answer(msg)) }),
    reply: (r) => r.reply,
    after: ({ started, result }) => {
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      metrics?.verifications.inc({ result });
      metrics?.verifyDuration.observe({ result }, seconds);
    },
    describe,
  });
}

function describe(err: unknown): { name: string; code?: string; message: string } {
  if (!(err instanceof Error)) return { name: 'Error', message: String(err) };
  const code = (err as { code?: unknown }).code;
  // A driver message could quote a parameter, and the only parameter here is a key hash.
  const message = err.message.replace(/[0-9a-f]{64}/gi, '[redacted]');
  return { name: err.name, message, ...(typeof code === 'string' ? { code } : {}) };
}
