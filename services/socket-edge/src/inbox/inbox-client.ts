import { type NatsRequester, replyJson } from '@herald/nats';
import {
  errorOfReply,
  HeraldError,
  type InboxCatchUpEvent,
  type InboxEvent,
  InboxQuery,
  InboxQueryReply,
  subjects,
} from '@herald/proto';

const utf8 = new TextEncoder();

/** What the edge learns of one query: the store's answer, success parts only. */
type OkReply = Extract<InboxQueryReply, { ok: true }>;

/**
 * The edge's side of `rt.inboxapi.query.<account>` (proto/inbox.ts): the inbox store answers each
 * request once. Every request and answer is checked with proto's zod schemas; an answer that is not
 * one, no responder, or a timeout is a {@link HeraldError} `unavailable` (the socket stays open and
 * the client may ask again), a refusal is the store's own error.
 */
export class InboxClient {
  readonly #requester: NatsRequester;
  readonly #timeoutMs: number;

  constructor(requester: NatsRequester, timeoutMs: number) {
    this.#requester = requester;
    this.#timeoutMs = timeoutMs;
  }

  async unread(account: string, recipient: string): Promise<number> {
    const reply = await this.#ask(account, { v: 1, op: 'unread', recipient });
    return reply.unread ?? 0;
  }

  async read(
    account: string,
    recipient: string,
    mark: { ids: string[] } | { all: true },
  ): Promise<number> {
    const reply = await this.#ask(account, { v: 1, op: 'read', recipient, ...mark });
    return reply.unread ?? 0;
  }

  async history(
    account: string,
    recipient: string,
    before: string | null,
    limit: number,
  ): Promise<{ events: InboxEvent[]; next: string | null }> {
    const reply = await this.#ask(account, { v: 1, op: 'history', recipient, before, limit });
    return { events: reply.events ?? [], next: reply.next ?? null };
  }

  /** The stored events of `recipient` with a sequence above `after`, oldest first. */
  async after(
    account: string,
    recipient: string,
    after: number,
    limit: number,
  ): Promise<InboxCatchUpEvent[]> {
    const reply = await this.#ask(account, { v: 1, op: 'after', recipient, after, limit });
    return reply.catch_up ?? [];
  }

  async #ask(account: string, query: InboxQuery): Promise<OkReply> {
    const body = utf8.encode(JSON.stringify(InboxQuery.parse(query)));
    const outcome = await this.#requester.request(
      subjects.inboxQuery(account),
      body,
      undefined,
      this.#timeoutMs,
    );
    if (outcome.kind !== 'reply') throw unavailable(outcome.kind);
    const parsed = InboxQueryReply.safeParse(replyJson(outcome.msg));
    if (!parsed.success) throw unavailable('malformed reply');
    const reply = parsed.data;
    if (!reply.ok) throw errorOfReply(reply);
    return reply;
  }
}

function unavailable(why: string): HeraldError {
  return new HeraldError(
    'unavailable',
    `The inbox store did not answer (${why}): ask again shortly`,
  );
}
