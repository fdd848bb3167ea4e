import type { InboxCatchUpEvent } from '@herald/proto';
import type { DevicePositions } from '@herald/queue';
import type { FeedRun, FeedSource, PositionSpace } from '../feed/feed-source.js';
import { EventFrames } from '../socket/framing.js';
import type { InboxClient } from './inbox-client.js';

/** The inbox position's `stream` field: the store's sequences, not a queue partition's. */
export const INBOX_STREAM = 'inbox';

/** Below this many bytes an answer shorter than its limit was not cut to fit (NATS's 1 MiB, halved). */
const UNCUT_BYTES = 512 * 1024;

const utf8 = new TextEncoder();

/**
 * What a herald.v1 device socket of an inbox key catches up on (docs/architecture-history.md,
 * "Inbox mode: on the socket"): the events the inbox store keeps for the recipient after the
 * device's inbox position (`after`), oldest first. Its positions are the store's sequences, kept
 * in the device bucket's `inbox.` key space; a live or drained copy is matched by its id. An
 * unread notice (the store changed) wakes it.
 */
export class InboxSource implements FeedSource {
  readonly #inbox: Pick<InboxClient, 'after'>;
  readonly #account: string;
  readonly #recipient: string;
  readonly positions: PositionSpace;
  /** Events asked of the store per `after` request (INBOX_CATCH_UP_BATCH). */
  readonly run: number;

  constructor(
    inbox: Pick<InboxClient, 'after'>,
    recipient: { account: string; recipient: string },
    positions: DevicePositions | undefined,
    run: number,
  ) {
    this.#inbox = inbox;
    this.#account = recipient.account;
    this.#recipient = recipient.recipient;
    this.positions = { store: positions, stream: INBOX_STREAM };
    this.run = run;
  }

  get name(): string {
    return 'inbox';
  }

  get wakesOn(): 'unread' {
    return 'unread';
  }

  get keyedBy(): 'id' {
    return 'id';
  }

  async read(after: number, max: number): Promise<FeedRun> {
    const stored = await this.#inbox.after(this.#account, this.#recipient, after, max);
    const events = stored.map((ev) => ({
      position: ev.seq,
      frames: new EventFrames({
        id: ev.id,
        ts: ev.ts,
        data: utf8.encode(ev.payload_json),
        // A topic copy's frame carries its topic from the store as it does live (issue 44).
        topic: ev.topic,
      }),
    }));
    // The store cuts an answer to fit one NATS message: a short one that was big may be cut.
    const more = stored.length >= max || mayBeCut(stored);
    return { events, covered: stored.at(-1)?.seq ?? after, more };
  }
}

function mayBeCut(events: InboxCatchUpEvent[]): boolean {
  let bytes = 0;
  for (const e of events) bytes += e.payload_json.length * 3 + e.id.length + 64;
  return bytes >= UNCUT_BYTES;
}
