import type { Logger } from '@herald/kit';
import { type NatsRequester, replyJson } from '@herald/nats';
import {
  encodeLiveBatch,
  type LiveBatchMeta,
  LiveBatchReply,
  LiveHoldersReply,
  subjects,
} from '@herald/proto';
import type { LiveOutcome } from '../live-push.js';

/** One event of a batch that may go live. */
export interface LiveBatchItem {
  recipient: string;
  id: string;
  /** Epoch ms at which ingress accepted it (the queued copy carries the same). */
  ts: number;
  /** The payload's JSON text as UTF-8 bytes. */
  payload: Uint8Array;
  /** A topic event's copy (issue 44): its topic, which the edge puts on the frame. */
  topic?: string | undefined;
}

export interface LiveBatchOptions {
  requester: NatsRequester;
  /** How long the edges have to say which recipients they hold, ms (LIVE_TIMEOUT_MS). */
  timeoutMs: number;
  /**
   * How long the holding edges have to prove the events they wrote, ms (LIVE_PROOF_WAIT_MS). An
   * edge answers by half of it; what it wrote and no socket proved by then is answered 0 and queued.
   */
  proofWaitMs: number;
  /** Largest message nats-server takes (its max_payload): an edge's events are split to fit. */
  maxMessageBytes: number;
  logger: Logger;
}

/**
 * Pushes a batch's events live in two messages per batch instead of a request per event
 * (proto/live-batch.ts): ask every edge which of the batch's recipients it holds, then send each
 * holding edge its recipients' events in one request. Resolves, per item, what a single
 * dispatch's live request would have found: `sent` (an edge confirmed a socket write), `offline`
 * (no edge holds the recipient, or its edge wrote to no socket) or `timeout` (its edge did not
 * answer in time). The caller queues every event not `sent`, as it does a single dispatch's.
 */
export function createLiveBatch(opts: LiveBatchOptions) {
  const { requester, logger } = opts;
  // Room for the head's JSON per message and the NATS protocol line.
  const maxTail = Math.max(1, opts.maxMessageBytes - HEAD_ROOM_BYTES);
  const askMs = opts.timeoutMs;
  // Its own budget, not what is left of the question's: an event an edge wrote is given up on only
  // when its proof is really overdue, since giving up queues a copy the reader may then get twice.
  const writeMs = opts.proofWaitMs;

  return async function pushLiveBatch(
    account: string,
    items: readonly LiveBatchItem[],
  ): Promise<LiveOutcome[]> {
    const outcomes: LiveOutcome[] = items.map(() => OFFLINE);
    if (items.length === 0) return outcomes;
    const recipients: string[] = [];
    const slotOf = new Map<string, number>();
    for (const item of items) {
      if (slotOf.has(item.recipient)) continue;
      slotOf.set(item.recipient, recipients.length);
      recipients.push(item.recipient);
    }
    const holders = await askAllHolders(account, recipients);
    if (holders.size === 0) return outcomes;
    // Each edge gets the events of the recipients it holds, in the batch's order. A recipient held
    // on several edges (tabs on different edges) is sent to each, as a live request reaches every
    // edge subscribed to it.
    const perEdge = [...holders].map(([edge, held]) => ({
      edge,
      indices: items.flatMap((item, index) =>
        held.has(slotOf.get(item.recipient) as number) ? [index] : [],
      ),
    }));
    await Promise.all(
      perEdge.map(async ({ edge, indices }) => {
        const answered = await writeOn(edge, account, items, indices, writeMs);
        indices.forEach((index, at) => {
          if (outcomes[index]?.kind === 'sent') return; // another edge of the recipient wrote it
          const sockets = answered[at];
          outcomes[index] =
            sockets === undefined ? TIMEOUT : sockets > 0 ? { kind: 'sent', sockets } : OFFLINE;
        });
      }),
    );
    return outcomes;
  };

  /**
   * Step 1 in as many questions as fit nats-server's max_payload (one, below about 25,000
   * recipients): edge id → the recipients' slots it holds; only edges that hold any.
   */
  async function askAllHolders(
    account: string,
    recipients: readonly string[],
  ): Promise<Map<string, Set<number>>> {
    const perQuestion = Math.max(1, Math.floor(maxTail / RECIPIENT_BYTES));
    if (recipients.length <= perQuestion) return askHolders(account, recipients);
    const parts: Promise<Map<string, Set<number>>>[] = [];
    for (let from = 0; from < recipients.length; from += perQuestion) {
      const offset = from;
      parts.push(
        askHolders(account, recipients.slice(from, from + perQuestion)).then(
          (held) =>
            new Map(
              [...held].map(([edge, slots]) => [edge, new Set([...slots].map((s) => s + offset))]),
            ),
        ),
      );
    }
    const holders = new Map<string, Set<number>>();
    for (const part of await Promise.all(parts)) {
      for (const [edge, slots] of part) {
        const all = holders.get(edge);
        if (all) for (const slot of slots) all.add(slot);
        else holders.set(edge, slots);
      }
    }
    return holders;
  }

  /** One step-1 question: edge id → the recipients' slots it holds; only edges that hold any. */
  async function askHolders(
    account: string,
    recipients: readonly string[],
  ): Promise<Map<string, Set<number>>> {
    const holders = new Map<string, Set<number>>();
    const answered = new Set<string>();
    let expected = 1;
    const query = new TextEncoder().encode(JSON.stringify({ v: 1, recipients }));
    const outcome = await requester.gather(subjects.liveHolders(account), query, askMs, (msg) => {
      const reply = LiveHoldersReply.safeParse(replyJson(msg));
      if (!reply.success) {
        logger.warn({ account }, 'ignoring a malformed live-holders answer');
        return false;
      }
      const { edge, edges, held } = reply.data;
      answered.add(edge);
      expected = Math.max(expected, edges);
      const slots = new Set(held.filter((slot) => slot < recipients.length));
      if (slots.size > 0) holders.set(edge, slots);
      return answered.size >= expected;
    });
    if (outcome.kind === 'timeout' || outcome.kind === 'error') {
      // Whoever did not answer in time: their recipients' events are queued (same ids).
      logger.warn(
        { account, answered: answered.size, expected, outcome: outcome.kind },
        'not every edge said which recipients it holds: queueing the rest of the batch',
      );
    }
    return holders;
  }

  /**
   * Step 2 on one edge, in as few messages as fit nats-server's max_payload: per index, the sockets
   * it confirmed (undefined where it did not answer).
   */
  async function writeOn(
    edge: string,
    account: string,
    items: readonly LiveBatchItem[],
    indices: readonly number[],
    writeMs: number,
  ): Promise<(number | undefined)[]> {
    const chunks: number[][] = [[]];
    let tail = 0;
    for (const index of indices) {
      const item = items[index] as LiveBatchItem;
      const bytes = EVENT_HEAD_BYTES + (item.topic?.length ?? 0) + item.payload.byteLength;
      const chunk = chunks[chunks.length - 1] as number[];
      if (chunk.length > 0 && tail + bytes > maxTail) {
        chunks.push([index]);
        tail = bytes;
      } else {
        chunk.push(index);
        tail += bytes;
      }
    }
    const answers = await Promise.all(
      chunks.map((chunk) => writeChunk(edge, account, items, chunk, writeMs)),
    );
    return answers.flatMap((answer, at) => answer ?? (chunks[at] as number[]).map(() => undefined));
  }

  /** One step-2 message: per index, the sockets the edge confirmed; undefined when it did not answer. */
  async function writeChunk(
    edge: string,
    account: string,
    items: readonly LiveBatchItem[],
    indices: readonly number[],
    writeMs: number,
  ): Promise<number[] | undefined> {
    const meta: LiveBatchMeta = {
      v: 1,
      // The edge answers with what it wrote by then, well before this side gives up on it.
      reply_within_ms: Math.max(1, Math.floor(writeMs / 2)),
      events: indices.map((index) => {
        const item = items[index] as LiveBatchItem;
        const event: LiveBatchMeta['events'][number] = {
          recipient: item.recipient,
          id: item.id,
          ts: item.ts,
          bytes: item.payload.byteLength,
        };
        if (item.topic !== undefined) event.topic = item.topic;
        return event;
      }),
    };
    const data = encodeLiveBatch(
      meta,
      indices.map((index) => (items[index] as LiveBatchItem).payload),
    );
    const subject = subjects.edgeLive(edge, account);
    try {
      const reply = await requester.requestJson(subject, data, LiveBatchReply, writeMs);
      if (reply.sockets.length === indices.length) return reply.sockets;
    } catch {
      // No answer: gone since it answered step 1, too slow, or a malformed answer.
    }
    // Its events are queued (the caller logs each, as a single dispatch's unconfirmed live push).
    return undefined;
  }
}

/** The head's JSON for one event: recipient, id, ts, byte count and punctuation, generously. */
const EVENT_HEAD_BYTES = 160;
/** One recipient id in a step-1 question: a quoted UUID and its comma. */
const RECIPIENT_BYTES = 39;
/** The head's fixed part and the NATS protocol line, generously. */
const HEAD_ROOM_BYTES = 1024;

const OFFLINE: LiveOutcome = { kind: 'offline' };
const TIMEOUT: LiveOutcome = { kind: 'timeout' };

export type PushLiveBatch = ReturnType<typeof createLiveBatch>;
