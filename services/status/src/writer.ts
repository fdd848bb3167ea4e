import type { Logger } from '@herald/kit';
import { STATUS_CONSUMER, STATUS_STREAM, StatusEvent } from '@herald/proto';
import type { Kysely } from 'kysely';
import { AckPolicy, type JetStreamClient, type JetStreamManager, type JsMsg } from 'nats';
import { writeBatch } from './batch-store.js';
import type { StatusDb } from './db-schema.js';
import type { StatusMetrics } from './metrics.js';

/** Delay before a held-back or failed record comes again, ms. */
const RETRY_DELAY_MS = 1000;

export interface WriterOptions {
  batchMax: number;
  batchWaitMs: number;
  orphanRetries: number;
}

export interface WriterDeps {
  db: Kysely<StatusDb>;
  js: JetStreamClient;
  jsm: JetStreamManager;
  logger: Logger;
  metrics: StatusMetrics;
}

/** The durable pull consumer the writer reads the status stream with. */
export async function ensureWriterConsumer(jsm: JetStreamManager, batchMax: number): Promise<void> {
  await jsm.consumers.add(STATUS_STREAM, {
    durable_name: STATUS_CONSUMER,
    ack_policy: AckPolicy.Explicit,
    ack_wait: 30_000 * 1_000_000,
    // Room for a batch being written and the next one being fetched.
    max_ack_pending: batchMax * 4,
    max_deliver: -1,
  });
}

/**
 * Reads the status stream in batches (up to batchMax records, or what came within batchWaitMs)
 * and writes each batch in one transaction, acking its records only once it is committed: a
 * crash between the two redelivers them, and the merge makes a second write change nothing.
 */
export class StatusWriter {
  readonly #deps: WriterDeps;
  readonly #opts: WriterOptions;
  #stopped = false;
  #loop: Promise<void> | undefined;

  constructor(deps: WriterDeps, opts: WriterOptions) {
    this.#deps = deps;
    this.#opts = opts;
  }

  start(): void {
    this.#loop ??= this.#run();
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    await this.#loop;
  }

  async #run(): Promise<void> {
    const { js, logger } = this.#deps;
    while (!this.#stopped) {
      try {
        const consumer = await js.consumers.get(STATUS_STREAM, STATUS_CONSUMER);
        while (!this.#stopped) {
          const msgs: JsMsg[] = [];
          // Under load a batch fills at once; idle, what came is written when the fetch expires.
          // The fetch is never stopped early: records the server already sent to a stopped fetch
          // are dropped by the client and only come again after ack_wait (measured: a 30 s stall).
          const iter = await consumer.fetch({
            max_messages: this.#opts.batchMax,
            expires: this.#opts.batchWaitMs,
          });
          for await (const m of iter) msgs.push(m);
          if (msgs.length > 0) await this.#write(msgs);
        }
      } catch (err) {
        if (this.#stopped) break;
        logger.warn({ err: String(err) }, 'status stream read failed: retrying');
        await new Promise((r) => setTimeout(r, RETRY_DELAY_MS));
      }
    }
  }

  async #write(msgs: JsMsg[]): Promise<void> {
    const { db, logger, metrics } = this.#deps;
    const records: StatusEvent[] = [];
    const sources: JsMsg[] = [];
    for (const m of msgs) {
      const parsed = StatusEvent.safeParse(parseJson(m.data));
      if (!parsed.success) {
        metrics.invalid.inc();
        m.term();
        continue;
      }
      records.push(parsed.data);
      sources.push(m);
    }
    const started = performance.now();
    try {
      const result = await writeBatch(
        db,
        records,
        (i) => (sources[i]?.info.redeliveryCount ?? 0) > this.#opts.orphanRetries,
      );
      const held = new Set(result.deferred);
      for (const [i, m] of sources.entries()) {
        if (held.has(i)) m.nak(RETRY_DELAY_MS);
        else m.ack();
      }
      metrics.records.inc(records.length - held.size);
      metrics.batches.inc();
      metrics.batchSeconds.observe((performance.now() - started) / 1000);
      this.#deps.logger.debug(
        {
          records: records.length,
          deferred: held.size,
          ms: Math.round(performance.now() - started),
        },
        'status batch written',
      );
    } catch (err) {
      logger.error(
        { err: String(err), records: records.length },
        'status batch write failed: will retry',
      );
      for (const m of sources) m.nak(RETRY_DELAY_MS);
      metrics.failedBatches.inc();
    }
  }
}

function parseJson(data: Uint8Array): unknown {
  try {
    return JSON.parse(new TextDecoder().decode(data));
  } catch {
    return undefined;
  }
}
