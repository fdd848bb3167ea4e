import type { EdgeSocket } from '../socket/edge-socket.js';
import type { RecipientSession } from './recipient-session.js';

/**
 * Maps `<account>.<recipient>` to the recipient's session on this edge. The account comes from
 * the verified key, never from the client, so tenants are isolated by subject: a socket opened
 * with a key of account A only ever joins sessions subscribed to account A's subjects.
 */
export class RecipientRegistry {
  /**
   * By account, then recipient: nested rather than keyed by `<account>.<recipient>`, whose string
   * (built, then flattened to hash it) would be one more string held per connected recipient.
   */
  readonly #sessions = new Map<string, Map<string, RecipientSession>>();
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

  /** The recipient's session on this edge, if any (open, or still opening its first socket). */
  get(account: string, recipient: string): RecipientSession | undefined {
    return this.#sessions.get(account)?.get(recipient);
  }

  /**
   * Holds the recipient's session (creating it) for a connect that passed every check; the
   * caller awaits `session.ready()`, then calls {@link attach} with the opened socket or
   * {@link cancel}.
   */
  reserve(account: string, recipient: string): RecipientSession {
    let ofAccount = this.#sessions.get(account);
    let session = ofAccount?.get(recipient);
    if (!session || session.broken) {
      session = this.#create(account, recipient, this.#closing.get(sessionId(account, recipient)));
      if (!ofAccount) {
        ofAccount = new Map();
        this.#sessions.set(account, ofAccount);
      }
      ofAccount.set(recipient, session);
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
    for (const ofAccount of this.#sessions.values()) {
      for (const session of ofAccount.values()) yield* session.sockets();
    }
  }

  /** Closes every session (their drainers nak what they held) and forgets them. */
  async closeAll(): Promise<void> {
    const sessions = [...this.#sessions.values()].flatMap((ofAccount) => [...ofAccount.values()]);
    this.#sessions.clear();
    await Promise.all(sessions.map((s) => s.close()));
  }

  #closeIfIdle(session: RecipientSession): void {
    if (!session.idle) return;
    const id = sessionId(session.account, session.recipient);
    const ofAccount = this.#sessions.get(session.account);
    if (ofAccount?.get(session.recipient) === session) {
      ofAccount.delete(session.recipient);
      if (ofAccount.size === 0) this.#sessions.delete(session.account);
    }
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
