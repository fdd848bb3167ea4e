import { describe, expect, it } from 'vitest';
import type { EdgeSocket } from '../socket/edge-socket.js';
import { RecipientRegistry } from './connection-registry.js';
import type { RecipientSession } from './recipient-session.js';

/** The part of a session the registry uses, with a close that ends when the test says so. */
class SessionDouble {
  readonly account = 'acct';
  readonly recipient = 'r1';
  readonly broken = false;
  sockets = 0;
  pending = 0;
  closeEnded = false;
  #endClose: () => void = () => {};
  constructor(readonly previous: Promise<void> | undefined) {}
  get idle(): boolean {
    return this.sockets === 0 && this.pending === 0;
  }
  reserve(): void {
    this.pending++;
  }
  settle(socket?: EdgeSocket): void {
    this.pending--;
    if (socket) this.sockets++;
  }
  remove(): void {
    this.sockets--;
  }
  close(): Promise<void> {
    return new Promise((resolve) => {
      this.#endClose = () => {
        this.closeEnded = true;
        resolve();
      };
    });
  }
  endClose(): void {
    this.#endClose();
  }
}

function registry(): { reg: RecipientRegistry; made: SessionDouble[] } {
  const made: SessionDouble[] = [];
  const reg = new RecipientRegistry((_account, _recipient, previous) => {
    const s = new SessionDouble(previous);
    made.push(s);
    return s as unknown as RecipientSession;
  });
  return { reg, made };
}

const socket = {} as EdgeSocket;

describe('RecipientRegistry: a reconnect while the last session still closes', () => {
  it("hands the new session the previous close, so its drain starts after that session's naks", async () => {
    const { reg, made } = registry();
    const first = reg.reserve('acct', 'r1');
    reg.attach(first, socket);
    reg.detach(first, socket);
    // The first session is closing (its drainer nakking what it held) when the recipient is back.
    reg.reserve('acct', 'r1');
    expect(made).toHaveLength(2);
    const [old, next] = made as [SessionDouble, SessionDouble];
    expect(next.previous).toBeInstanceOf(Promise);
    let startedAfter: boolean | undefined;
    const started = next.previous?.then(() => {
      startedAfter = old.closeEnded;
    });
    old.endClose();
    await started;
    expect(startedAfter).toBe(true);
  });

  it('hands nothing once the previous close has ended', async () => {
    const { reg, made } = registry();
    const first = reg.reserve('acct', 'r1');
    reg.attach(first, socket);
    reg.detach(first, socket);
    (made[0] as SessionDouble).endClose();
    await new Promise((r) => setImmediate(r));
    reg.reserve('acct', 'r1');
    expect((made[1] as SessionDouble).previous).toBeUndefined();
  });
});
