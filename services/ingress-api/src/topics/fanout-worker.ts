import type { Logger } from '@herald/kit';
import { FANOUT_CONSUMER, FANOUT_STREAM, FanoutItem, HeraldError } from '@herald/proto';
import type { TopicClient } from '@herald/status-client';
import type { Consumer, JetStreamClient, JsMsg } from 'nats';
import type { LiveBatchItem, PushLiveBatch } from '../batch/live-batch.js';
import type { IngressConfig } from '../config.js';
import type { Deliver } from '../deliver.js';
import type { LiveOutcome } from '../live-push.js';
import type { Outcome } from '../outcome.js';
import { copyIdOf } from './copy-id.js';
import { FanoutPacer } from './fanout-pacer.js';

export interface FanoutWorkerDeps {
  js: JetStreamClient;
  /** The direct dispatch's deliver step (live, else queued; a status record per outcome). */
  deliver: Deliver;
  topics: Pick<TopicClient, 'chunk'>;
  /**
   * FANOUT_LIVE=grouped: the live push of each FANOUT_LIVE_GROUP copies of a chunk in two messages
   * (the batch's, live-batch.ts), every copy's proof awaited at once; absent, each copy's deliver
   * step pushes it on its own.
   */
  pushLiveBatch?: PushLiveBatch | undefined;
  config: Pick<
    IngressConfig,
    | 'FANOUT_WORKERS'
    | 'FANOUT_COPY_CONCURRENCY'
    | 'FANOUT_ACK_WAIT_MS'
    | 'FANOUT_COPIES_PER_S'
    | 'FANOUT_LIVE_GROUP'
  >;
  logger: Logger;
  /** Counts each chunk's end and each copy's outcome. */
  onChunk?: (result: 'acked' | 'retried' | 'dropped', copies: number) => void;
}

export interface FanoutWorkers {
  /** Stops pulling; resolves once the chunks in hand are done (acked or left to redeliver). */
  stop(): Promise<void>;
}

/** How long one pull waits for a chunk before asking again (and seeing a stop), ms. */
const PULL_EXPIRES_MS = 2000;
/** Delay before a chunk with a failed copy is offered again, ms. */
const RETRY_DELAY_MS = 1000;

/**
 * The fan-out's workers on this instance (issue 44): FANOUT_WORKERS loops, each pulling one chunk
 * at a time from HERALD_FANOUT's one durable consumer, reading its recipients from the snapshot
 * and delivering each member's copy through the direct dispatch's deliver step,
 * FANOUT_COPY_CONCURRENCY at once, under the id derived from the topic event's and the recipient.
 * A chunk is acked only once every copy is sent, queued or refused for good (a plan's cap: its
 * status says `failed`); a copy that failed for now (JetStream, status unreachable) leaves the
 * chunk to come back, and the derived ids make the copies it already placed duplicates that
 * JetStream's window drops. While it works the chunk's ack deadline is pushed on, so only a
 * worker that is gone (killed, cut off) lets it go to another after FANOUT_ACK_WAIT_MS.
 * Three knobs bound what a fan-out takes from direct dispatch on this instance: at most
 * FANOUT_WORKERS × FANOUT_COPY_CONCURRENCY copies in flight, and FANOUT_COPIES_PER_S a second
 * over all of them (one pacer per instance).
 */
export async function startFanoutWorkers(deps: FanoutWorkerDeps): Promise<FanoutWorkers> {
  let stopping = false;
  if (deps.config.FANOUT_WORKERS === 0) return { stop: async () => undefined };
  const consumer = await deps.js.consumers.get(FANOUT_STREAM, FANOUT_CONSUMER);
  const pacer = new FanoutPacer(deps.config.FANOUT_COPIES_PER_S);
  const loops: Promise<void>[] = [];
  for (let i = 0; i < deps.config.FANOUT_WORKERS; i++) {
    loops.push(
      (async () => {
        while (!stopping) {
          const msg = await pull(consumer, deps.logger);
          if (msg) await work(deps, pacer, msg);
          else if (!stopping) await pause(100);
        }
      })(),
    );
  }
  return {
    async stop() {
      stopping = true;
      await Promise.all(loops);
    },
  };
}

async function pull(consumer: Consumer, logger: Logger): Promise<JsMsg | null> {
  try {
    return await consumer.next({ expires: PULL_EXPIRES_MS });
  } catch (err) {
    logger.warn({ err: String(err) }, 'fan-out: could not pull a chunk');
    await pause(RETRY_DELAY_MS);
    return null;
  }
}

async function work(deps: FanoutWorkerDeps, pacer: FanoutPacer, msg: JsMsg): Promise<void> {
  const parsed = FanoutItem.safeParse(safeJson(msg.data));
  if (!parsed.success) {
    // Not one ingress wrote: nothing can deliver it, and it must not block the queue.
    deps.logger.error({ seq: msg.seq }, 'fan-out: dropping a chunk that is not a FanoutItem');
    msg.term();
    deps.onChunk?.('dropped', 0);
    return;
  }
  const item = parsed.data;
  // Word to JetStream while this worker lives: the chunk stays this worker's.
  const beat = setInterval(() => msg.working(), Math.max(500, deps.config.FANOUT_ACK_WAIT_MS / 3));
  try {
    const account = item.key.account_id;
    const { recipients } = await deps.topics.chunk(account, item.id, item.chunk);
    const payload = Buffer.from(item.payload_json, 'utf8');
    const topic = { name: item.topic, id: item.id };
    // Grouped: a group's live copies go out at once and their proofs come back together; a copy
    // no socket proved is queued below by its deliver step, as a single dispatch's. Inbox keys'
    // copies are kept before they are pushed, so their deliver step pushes each.
    const grouped = deps.pushLiveBatch !== undefined && !item.key.inbox_days;
    const group = grouped ? deps.config.FANOUT_LIVE_GROUP : recipients.length;
    let failed = 0;
    // Group by group, each copy paced: the pace spaces the copies' placing (the costly part, a
    // stored copy's write), not only the chunks, so a chunk never goes as one burst that
    // saturates the core direct events share (figure 10).
    for (let start = 0; start < recipients.length; start += group) {
      const members = recipients.slice(start, start + group);
      const ids = members.map((recipient) => copyIdOf(item.id, recipient));
      const live: (LiveOutcome | undefined)[] =
        grouped && deps.pushLiveBatch
          ? await deps.pushLiveBatch(
              account,
              members.map(
                (recipient, i): LiveBatchItem => ({
                  recipient,
                  id: ids[i] as string,
                  ts: item.ts,
                  payload,
                  topic: item.topic,
                }),
              ),
            )
          : [];
      await eachLimited(members.keys(), deps.config.FANOUT_COPY_CONCURRENCY, async (i) => {
        const id = ids[i] as string;
        await pacer.take();
        const outcome: Outcome = await deps.deliver(
          {
            key: item.key,
            account,
            recipient: members[i] as string,
            payload,
            push: item.push,
            topic,
          },
          id,
          id,
          { ts: item.ts, live: live[i] },
        );
        if (outcome.kind === 'failed') failed++;
      });
    }
    if (failed > 0) {
      deps.logger.warn(
        { id: item.id, chunk: item.chunk, failed },
        'fan-out: copies failed for now; the chunk comes back',
      );
      msg.nak(RETRY_DELAY_MS);
      deps.onChunk?.('retried', recipients.length);
      return;
    }
    await msg.ackAck();
    deps.onChunk?.('acked', recipients.length);
  } catch (err) {
    if (err instanceof HeraldError && err.code === 'not_found') {
      // Its snapshot is gone (trimmed with the status window): no worker can ever deliver it.
      deps.logger.error(
        { id: item.id, chunk: item.chunk },
        'fan-out: dropping a chunk whose snapshot is gone',
      );
      msg.term();
      deps.onChunk?.('dropped', 0);
      return;
    }
    deps.logger.warn(
      { err: String(err), id: item.id, chunk: item.chunk },
      'fan-out: chunk not done; it comes back',
    );
    msg.nak(RETRY_DELAY_MS);
    deps.onChunk?.('retried', 0);
  } finally {
    clearInterval(beat);
  }
}

/** Runs `task` over `items`, at most `limit` at once. */
async function eachLimited<T>(
  iterable: Iterable<T>,
  limit: number,
  task: (item: T) => Promise<void>,
): Promise<void> {
  const items = [...iterable];
  let next = 0;
  const lanes = Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (next < items.length) {
      const item = items[next++] as T;
      await task(item);
    }
  });
  await Promise.all(lanes);
}

function safeJson(data: Uint8Array): unknown {
  try {
    return JSON.parse(Buffer.from(data).toString('utf8'));
  } catch {
    return undefined;
  }
}

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));
