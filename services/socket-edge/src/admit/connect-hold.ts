import type { VerifiedKey } from '@herald/proto';
import type { ConnectionGate } from './connection-gate.js';
import type { SocketBudget } from './socket-budget.js';

/**
 * What one connect holds from its first check until its socket closes: a MAX_SOCKETS slot, then
 * the gate's admission. An object rather than a closure over the upgrade handler's scope: it is kept as
 * long as the socket, and a closure would keep that whole scope (parameters, request state) too.
 */
export class ConnectHold {
  readonly #budget: SocketBudget;
  readonly #gate: ConnectionGate;
  #slot = false;
  #key: VerifiedKey | undefined;
  #recipient = '';

  constructor(budget: SocketBudget, gate: ConnectionGate) {
    this.#budget = budget;
    this.#gate = gate;
  }

  /** Takes a MAX_SOCKETS slot; false when the edge holds its maximum. */
  takeSlot(): boolean {
    this.#slot = this.#budget.take();
    return this.#slot;
  }

  /** Asks the gate (429 when it refuses); once admitted, the admission is held until release. */
  admit(key: VerifiedKey, recipient: string): Promise<void> | undefined {
    const pending = this.#gate.admit(key, recipient);
    if (!pending) return this.#admitted(key, recipient);
    return pending.then(() => this.#admitted(key, recipient));
  }

  #admitted(key: VerifiedKey, recipient: string): undefined {
    this.#key = key;
    this.#recipient = recipient;
    return undefined;
  }

  /** Gives back what is held; later calls do nothing. */
  release(): void {
    if (this.#slot) this.#budget.give();
    if (this.#key) this.#gate.release(this.#key, this.#recipient);
    this.#slot = false;
    this.#key = undefined;
  }
}
