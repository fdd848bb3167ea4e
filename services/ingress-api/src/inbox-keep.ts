import { HeraldError, type InboxStoreEvent, type VerifiedKey } from '@herald/proto';
import type { InboxClient } from '@herald/status-client';

/** One event of an inbox key to keep before its sender is answered. */
export interface KeepItem {
  recipient: string;
  id: string;
  ts: number;
  /** The sender's payload JSON, as received. */
  payload: Uint8Array;
  /** A topic event's copy (issue 44): its topic, kept for the device's catch-up frame. */
  topic?: string | undefined;
}

export interface InboxKeeper {
  /**
   * Keeps `items` (all of one inbox key) in the inbox store: per item, undefined once kept, or the
   * HeraldError refusing it (`inbox_full`, 507). Throws 503 `unavailable` when the store does not
   * answer: then nothing may be accepted.
   */
  keep(key: VerifiedKey, items: readonly KeepItem[]): Promise<Array<HeraldError | undefined>>;
}

/** Room in one store request for everything but the payloads, per event and overall, bytes. */
const PER_EVENT_OVERHEAD = 200;
const REQUEST_OVERHEAD = 1024;

const utf8 = new TextDecoder();

/**
 * Inbox mode's step before the answer (issue 32): an inbox key's events go to
 * `rt.inboxapi.store.<account>` first, so an event answered 200/202 is kept. Requests stay under
 * NATS's max payload: a large batch is split, its parts sent at once.
 */
export function createInboxKeeper(
  inbox: Pick<InboxClient, 'store'>,
  opts: { timeoutMs: number; maxMessageBytes: () => number },
): InboxKeeper {
  return {
    async keep(key, items) {
      const days = key.inbox_days;
      if (!days) throw new Error('inbox keeper: a key without inbox mode');
      const budget = opts.maxMessageBytes() - REQUEST_OVERHEAD;
      const chunks: Array<{ start: number; events: InboxStoreEvent[] }> = [];
      let bytes = 0;
      items.forEach((it, i) => {
        const payload_json = utf8.decode(it.payload);
        const size = Buffer.byteLength(payload_json) + PER_EVENT_OVERHEAD;
        const last = chunks.at(-1);
        if (!last || (bytes + size > budget && last.events.length > 0)) {
          chunks.push({ start: i, events: [] });
          bytes = 0;
        }
        bytes += size;
        const event: InboxStoreEvent = {
          recipient: it.recipient,
          id: it.id,
          ts: it.ts,
          payload_json,
        };
        if (it.topic !== undefined) event.topic = it.topic;
        chunks.at(-1)?.events.push(event);
      });
      const out: Array<HeraldError | undefined> = new Array(items.length).fill(undefined);
      await Promise.all(
        chunks.map(async ({ start, events }) => {
          const answer = await inbox.store(
            key.account_id,
            { v: 1, key_id: key.id, days, events },
            opts.timeoutMs,
          );
          events.forEach((_e, j) => {
            const r = answer.results[j];
            if (r === undefined) {
              throw new HeraldError(
                'unavailable',
                'The inbox store answered too few results: nothing was accepted, retry shortly',
                { retryAfter: 1 },
              );
            }
            if ('error' in r) out[start + j] = refusalOf(r.error);
          });
        }),
      );
      return out;
    },
  };
}

function refusalOf(error: { code: string; message: string; field?: string | undefined }) {
  if (error.code === 'inbox_full') {
    return new HeraldError(
      'inbox_full',
      "This recipient's inbox is full and none of its events is read: nothing was stored or sent; mark events read (POST /inbox/read) or wait for them to expire, then retry",
      { field: 'recipient' },
    );
  }
  // The store refused what ingress itself checked (a payload not JSON): a bug, never the sender's.
  return new HeraldError('internal', `The inbox store refused the event: ${error.message}`);
}
