import type { Logger } from '@herald/kit';
import {
  errorReply,
  HeraldError,
  type InboxStoreReply,
  InboxStoreRequest,
  type InboxStoreResult,
} from '@herald/proto';
import type { Kysely } from 'kysely';
import type { Msg } from 'nats';
import type { StatusDb } from '../db-schema.js';
import { type StoreItem, storeEvents } from './store.js';

const DAY_MS = 24 * 3600_000;

interface Pending {
  msg: Msg;
  results: Array<InboxStoreResult | undefined>;
  /** Events not yet settled (stored, refused, or judged invalid). */
  left: number;
  failed: boolean;
}

interface Entry {
  req: Pending;
  index: number;
  item: StoreItem;
}

export interface StoreBatcherDeps {
  db: Kysely<StatusDb>;
  logger: Logger;
  /** INBOX_MAX_PER_RECIPIENT. */
  cap: number;
  /** INBOX_BATCH_MAX: most events one transaction keeps. */
  batchMax: number;
  /** Called after each committed batch with the recipients that gained an event. */
  changed: (recipients: Array<{ account: string; recipient: string }>) => void;
}

/**
 * Keeps the events of `rt.inboxapi.store.<account>` requests. While a transaction is in flight,
 * the requests that arrive queue up; the next transaction takes them all (up to batchMax events),
 * so concurrent stores share one insert, as the status writer's records do, and an idle store
 * waits for nothing. A request larger than batchMax is split over transactions and answered
 * when its last event is settled. The account is the subject's, never the body's.
 */
export class InboxStoreBatcher {
  readonly #deps: StoreBatcherDeps;
  #queue: Entry[] = [];
  #running: Promise<void> | undefined;

  constructor(deps: StoreBatcherDeps) {
    this.#deps = deps;
  }

  /** Takes one request; answers it once its events are kept (or refused). */
  take(msg: Msg, account: string): void {
    const parsed = InboxStoreRequest.safeParse(json(msg));
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      respond(
        msg,
        errorReply(
          new HeraldError('invalid_field', `not an InboxStoreRequest: ${issue?.message ?? ''}`, {
            field: issue?.path.join('.') || undefined,
          }),
        ),
      );
      return;
    }
    const req = parsed.data;
    const pending: Pending = {
      msg,
      results: req.events.map(() => undefined),
      left: req.events.length,
      failed: false,
    };
    req.events.forEach((e, index) => {
      const expiresAt = new Date(e.ts + req.days * DAY_MS);
      const bad = invalidEvent(e.id, e.payload_json, expiresAt);
      if (bad) {
        pending.results[index] = {
          error: { code: 'invalid_field', message: bad.message, field: bad.field },
        };
        pending.left--;
        return;
      }
      this.#queue.push({
        req: pending,
        index,
        item: {
          account,
          recipient: e.recipient,
          id: e.id,
          ts: e.ts,
          payloadJson: e.payload_json,
          topic: e.topic,
          expiresAt,
        },
      });
    });
    if (pending.left === 0) this.#finish(pending);
    else this.#running ??= this.#drain();
  }

  /** Resolves when every queued event has been written (or has failed). */
  async idle(): Promise<void> {
    await this.#running;
  }

  async #drain(): Promise<void> {
    try {
      while (this.#queue.length > 0) {
        const batch = this.#queue.splice(0, this.#deps.batchMax).filter((e) => !e.req.failed);
        if (batch.length > 0) await this.#write(batch);
      }
    } finally {
      this.#running = undefined;
    }
  }

  async #write(batch: Entry[]): Promise<void> {
    const { db, logger, cap } = this.#deps;
    let result: Awaited<ReturnType<typeof storeEvents>>;
    try {
      result = await storeEvents(
        db,
        batch.map((e) => e.item),
        cap,
      );
    } catch (err) {
      logger.error({ err: String(err), events: batch.length }, 'inbox store failed');
      const reply = errorReply(
        new HeraldError(
          'unavailable',
          'The inbox store is unavailable: nothing was kept, retry shortly',
        ),
      );
      for (const e of batch) {
        if (e.req.failed) continue;
        e.req.failed = true;
        respond(e.req.msg, reply);
      }
      return;
    }
    batch.forEach((e, i) => {
      const o = result.outcomes[i];
      e.req.results[e.index] =
        o && 'seq' in o
          ? { seq: o.seq }
          : {
              error: {
                code: 'inbox_full',
                message: `the recipient's inbox holds ${cap} events (INBOX_MAX_PER_RECIPIENT) and none is read: nothing was kept; mark events read or wait for them to expire`,
                field: 'recipient',
              },
            };
      e.req.left--;
      if (e.req.left === 0) this.#finish(e.req);
    });
    if (result.changed.length > 0) this.#deps.changed(result.changed);
  }

  #finish(p: Pending): void {
    const reply: InboxStoreReply = {
      v: 1,
      ok: true,
      results: p.results.map((r) => r ?? { error: { code: 'unavailable', message: 'not kept' } }),
    };
    respond(p.msg, reply);
  }
}

/**
 * Why an event cannot be kept, or null: Postgres text holds no NUL, a payload must be JSON, and
 * its expiry a date Postgres and JavaScript can hold. Checked one by one, so a bad event is refused
 * alone instead of failing the transaction its neighbours share.
 */
function invalidEvent(
  id: string,
  payloadJson: string,
  expiresAt: Date,
): { field: string; message: string } | null {
  if (id.includes('\u0000')) return { field: 'id', message: 'id must not contain a NUL character' };
  if (Number.isNaN(expiresAt.getTime()) || expiresAt.getTime() < 0) {
    return { field: 'ts', message: 'ts must be an epoch time in ms (its expiry out of range)' };
  }
  try {
    JSON.parse(payloadJson);
  } catch {
    return { field: 'payload_json', message: 'payload_json must be JSON text' };
  }
  return null;
}

function respond(msg: Msg, reply: unknown): void {
  if (msg.reply) msg.respond(JSON.stringify(reply));
}

export function json(msg: Msg): unknown {
  try {
    return JSON.parse(new TextDecoder().decode(msg.data));
  } catch {
    return undefined;
  }
}
