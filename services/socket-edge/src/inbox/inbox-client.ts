import type { InboxCatchUpEvent, InboxEvent } from '@herald/proto';
import type { InboxClient as StoreClient } from '@herald/status-client';

/**
 * What the edge asks of one recipient's inbox (`rt.inboxapi.query.<account>`, answered by the
 * status service's store), through lib/status-client's client with the edge's
 * INBOX_QUERY_TIMEOUT_MS. A refusal is the store's own HeraldError; no answer is `unavailable`.
 */
export class InboxClient {
  readonly #store: Pick<StoreClient, 'query'>;
  readonly #timeoutMs: number;

  constructor(store: Pick<StoreClient, 'query'>, timeoutMs: number) {
    this.#store = store;
    this.#timeoutMs = timeoutMs;
  }

  async unread(account: string, recipient: string): Promise<number> {
    const reply = await this.#store.query(
      account,
      { v: 1, op: 'unread', recipient },
      this.#timeoutMs,
    );
    return reply.unread ?? 0;
  }

  async read(
    account: string,
    recipient: string,
    mark: { ids: string[] } | { all: true },
  ): Promise<number> {
    const query = { v: 1 as const, op: 'read' as const, recipient, ...mark };
    const reply = await this.#store.query(account, query, this.#timeoutMs);
    return reply.unread ?? 0;
  }

  async history(
    account: string,
    recipient: string,
    before: string | null,
    limit: number,
  ): Promise<{ events: InboxEvent[]; next: string | null }> {
    const query = { v: 1 as const, op: 'history' as const, recipient, before, limit };
    const reply = await this.#store.query(account, query, this.#timeoutMs);
    return { events: reply.events ?? [], next: reply.next ?? null };
  }

  /** The stored events of `recipient` with a sequence above `after`, oldest first. */
  async after(
    account: string,
    recipient: string,
    after: number,
    limit: number,
  ): Promise<InboxCatchUpEvent[]> {
    const query = { v: 1 as const, op: 'after' as const, recipient, after, limit };
    const reply = await this.#store.query(account, query, this.#timeoutMs);
    return reply.catch_up ?? [];
  }
}
