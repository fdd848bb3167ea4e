import type { Logger } from '@herald/kit';
import { accountOfLastToken, queueGroups, RefusalBatch, subjects } from '@herald/proto';
import type { Kysely } from 'kysely';
import type { NatsConnection, Subscription } from 'nats';
import type { StatusDb } from '../db-schema.js';
import { type RefusalStoreLimits, writeRefusals } from './store.js';

/**
 * Keeps every key's refusals ingress publishes on `rt.refusals.<account>` (core NATS, the status
 * queue group). A batch that is not a RefusalBatch, or names another account than its subject,
 * is dropped. Writes run one at a time: ingress sends at most one message per key per
 * REFUSAL_FLUSH_MS, and a lost one is a debugging aid lost (proto/refusals.ts).
 */
export function serveRefusals(deps: {
  nc: NatsConnection;
  db: Kysely<StatusDb>;
  logger: Logger;
  limits: RefusalStoreLimits;
}): { sub: Subscription; idle(): Promise<void> } {
  let chain: Promise<void> = Promise.resolve();
  const sub = deps.nc.subscribe(subjects.refusalsAll, {
    queue: queueGroups.status,
    callback: (err, msg) => {
      if (err) return;
      const batch = parse(msg.data);
      if (batch === undefined || accountOfLastToken(msg.subject) !== batch.account_id) {
        deps.logger.warn({ subject: msg.subject }, 'refusals message dropped: not a RefusalBatch');
        return;
      }
      chain = chain
        .then(() => writeRefusals(deps.db, batch, deps.limits))
        .catch((e: unknown) =>
          deps.logger.warn({ err: String(e) }, "a key's refusals could not be written"),
        );
    },
  });
  return { sub, idle: () => chain };
}

function parse(data: Uint8Array): RefusalBatch | undefined {
  try {
    const parsed = RefusalBatch.safeParse(JSON.parse(new TextDecoder().decode(data)));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}
