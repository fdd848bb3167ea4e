import type { Logger } from '@herald/kit';
import { STATUS_CONSUMER, STATUS_STREAM, StatusBatchEnvelope, StatusEvent } from '@herald/proto';
import type { Kysely } from 'kysely';
import { AckPolicy, type JetStreamClient, type JetStreamManager, type JsMsg } from 'nats';
import { writeBatch } from './batch-store.js';
import type { StatusDb } from './db-schema.js';
import type { StatusMetrics } from './metrics.js';
import type { EnqueueResult } from './webhooks/outbox.js';

/** Delay before a held-back or failed record comes again, ms. */
const RETRY_DELAY_MS = 1000;

export interface WriterOptions {
  batchMax: number;
  batchWaitMs: number;
  orphanRetries: number;
  /** WEBHOOK_ENDPOINT_QUEUE_MAX. */
  webhookQueueMax: number;
}

export interface WriterDeps {
  db: Kysely<StatusDb>;
  js: JetStreamClient;
  jsm: JetStreamManager;
  logger: Logger;
  metrics: StatusMetrics;
  /** Told what a batch enqueued (metrics, the drop log, waking the sender). */
  webhooksWritten: (r: EnqueueResult) => void;
  /** Told, after commit, the earliest push a batch made due (the push sender's timer). */
  pushDue?: (at: Date) => void;
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
 * Reads the status stream in batches (up to batchMax messages, or what came within batchWaitMs)
 * and writes their records in transactions of up to batchMax records, acking each message only
 * once its records are committed: a crash between the two redelivers them, and the merge makes a
 * second write change nothing. A message is one record or a batch of them (proto/status.ts).
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
          // are dropped by the client and only come again after ack_wait, a stall of its length.
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

  /**
   * Writes what one fetch brought, in transactions of up to batchMax records (a message is never
   * split, so one of up to STATUS_BATCH_RECORDS_MAX records may go alone past a lower batchMax).
   */
  async #write(msgs: JsMsg[]): Promise<void> {
    const { metrics } = this.#deps;
    let chunk: Decoded[] = [];
    let size = 0;
    for (const m of msgs) {
      const decoded = decodeStatusMessage(m);
      if (decoded.invalid > 0) metrics.invalid.inc(decoded.invalid);
      if (decoded.records.length === 0) {
        // Nothing in it is a status record: it can never be written, so it is not redelivered.
        m.term();
        continue;
      }
      if (size > 0 && size + decoded.records.length > this.#opts.batchMax) {
        await this.#writeChunk(chunk);
        chunk = [];
        size = 0;
      }
      chunk.push(decoded);
      size += decoded.records.length;
    }
    if (chunk.length > 0) await this.#writeChunk(chunk);
  }

  /**
   * One transaction for the records of some messages; each message is acked once its records are
   * committed. A message with a record held back (a `delivered` whose event has no key yet) is
   * nakked whole: its other records are already written, and writing them again when it comes
   * back changes nothing (a status counts only the first time its event reaches it).
   */
  async #writeChunk(chunk: Decoded[]): Promise<void> {
    const { db, logger, metrics } = this.#deps;
    const records: StatusEvent[] = [];
    const owner: JsMsg[] = [];
    for (const d of chunk) {
      for (const r of d.records) {
        records.push(r);
        owner.push(d.msg);
      }
    }
    const started = performance.now();
    try {
      const result = await writeBatch(
        db,
        records,
        (i) => (owner[i]?.info.redeliveryCount ?? 0) > this.#opts.orphanRetries,
        { webhookQueueMax: this.#opts.webhookQueueMax },
      );
      this.#deps.webhooksWritten(result.webhooks);
      if (result.pushDue) this.#deps.pushDue?.(result.pushDue);
      const held = new Set<JsMsg>();
      for (const i of result.deferred) {
        const m = owner[i];
        if (m) held.add(m);
      }
      for (const d of chunk) {
        if (held.has(d.msg)) d.msg.nak(RETRY_DELAY_MS);
        else d.msg.ack();
      }
      metrics.records.inc(records.length - result.deferred.length);
      metrics.batches.inc();
      metrics.batchSeconds.observe((performance.now() - started) / 1000);
      logger.debug(
        {
          messages: chunk.length,
          records: records.length,
          deferred: result.deferred.length,
          ms: Math.round(performance.now() - started),
        },
        'status batch written',
      );
    } catch (err) {
      logger.error(
        { err: String(err), records: records.length },
        'status batch write failed: will retry',
      );
      for (const d of chunk) d.msg.nak(RETRY_DELAY_MS);
      metrics.failedBatches.inc();
    }
  }
}

interface Decoded {
  msg: JsMsg;
  /** Its valid records, in order. */
  records: StatusEvent[];
  /** How many of its records (or the message itself) were not valid. */
  invalid: number;
}

/**
 * A status message in either form: one `StatusEvent` (every producer before batches, so a rolling
 * deploy's old ingress and edges keep being read), or a `StatusBatch` of them. A batch's records
 * are checked one by one, so a bad record drops alone and its neighbours are written.
 */
function decodeStatusMessage(msg: JsMsg): Decoded {
  const json = parseJson(msg.data);
  if (typeof json === 'object' && json !== null && 'records' in json) {
    const envelope = StatusBatchEnvelope.safeParse(json);
    if (!envelope.success) return { msg, records: [], invalid: 1 };
    const records: StatusEvent[] = [];
    let invalid = 0;
    for (const r of envelope.data.records) {
      const parsed = StatusEvent.safeParse(r);
      if (parsed.success) records.push(parsed.data);
      else invalid++;
    }
    return { msg, records, invalid };
  }
  const single = StatusEvent.safeParse(json);
  return single.success
    ? { msg, records: [single.data], invalid: 0 }
    : { msg, records: [], invalid: 1 };
}

function parseJson(data: Uint8Array): unknown {
  try {
    return JSON.parse(new TextDecoder().decode(data));
  } catch {
    return undefined;
  }
}
