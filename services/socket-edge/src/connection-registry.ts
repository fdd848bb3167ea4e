import type { EdgeSocket } from './edge-socket.js';
import type { RecipientSession } from './recipient-session.js';

/**
 * Maps `<account>.<recipient>` to the recipient's session on this edge. The account comes from
 * the verified key, never from the client, so tenants are isolated by subject: a socket opened
 * with a key of account A only ever joins sessions subscribed to account A's subjects.
 */
export class RecipientRegistry {
  readonly #sessions = new Map<string, RecipientSession>();
  /** Sessions closing (their drainers nakking what they held), by id, until the close ends. */
  readonly #closing = new Map<string, Promise<void>>();
  readonly #create: (
    account: string,
    recipient: string,
    previous?: Promise<void>,
  ) => RecipientSession;

  /**
   * @param create builds a session; `previous` is the close of the recipient's last session on
   *   this edge when it has not ended yet: the new session's drain starts after it, so the events
   *   that session nakked are redelivered first and the recipient gets the queue in stream order.
   */
  constructor(
    create: (account: string, recipient: string, previous?: Promise<void>) => RecipientSession,
  ) {
    this.#create = create;
  }

  /**
   * Holds the recipient's session (creating it) for a connect that passed every check; the
   * caller awaits `session.ready()`, then calls {@link attach} with the opened socket or
   * {@link cancel}.
   */
  reserve(account: string, recipient: string): RecipientSession {
    const id = sessionId(account, recipient);
    let session = this.#sessions.get(id);
    if (!session || session.broken) {
      session = this.#create(account, recipient, this.#closing.get(id));
      this.#sessions.set(id, session);
    }
    session.reserve();
    return session;
  }

  attach(session: RecipientSession, socket: EdgeSocket): void {
    session.settle(socket);
  }

  /** The reserved connect did not open: the session closes if nothing else holds it. */
  cancel(session: RecipientSession): void {
    session.settle();
    this.#closeIfIdle(session);
  }

  /** Removes a socket from its session; the last one out closes the session. */
  detach(session: RecipientSession, socket: EdgeSocket): void {
    session.remove(socket);
    this.#closeIfIdle(session);
  }

  *sockets(): Iterable<EdgeSocket> {
    for (const session of this.#sessions.values()) yield* session.sockets();
  }

  /** Closes every session (their drainers nak what they held) and forgets them. */
  async closeAll(): Promise<void> {
    const sessions = [...this.#sessions.values()];
    this.#sessions.clear();
    await Promise.all(sessions.map((s) => s.close()));
  }

  #closeIfIdle(session: RecipientSession): void {
    if (!session.idle) return;
    const id = sessionId(session.account, session.recipient);
    if (this.#sessions.get(id) === session) this.#sessions.delete(id);
    const closed = session.close().catch(() => undefined);
    this.#closing.set(id, closed);
    void closed.then(() => {
      if (this.#closing.get(id) === closed) this.#closing.delete(id);
    });
  }
}

function sessionId(account: string, recipient: string): string {
  return `${account}.${recipient}`;
}
