import type { Delivery } from './delivery.js';
import type { EdgeEvent } from './edge-event.js';

export interface LiveDeliveryHooks {
  /** One socket's write completed (counted in metrics). */
  wrote: () => void;
  /** The first write completed: answer the sender "sent" with how many sockets it was handed to. */
  reply: (sockets: number) => void;
  /** No socket proved receipt in time, or every one closed first: store the event for the next connect. */
  store: (event: EdgeEvent) => void;
  /**
   * Every socket's write failed before one completed, or no socket took it: the event is not sent
   * (a batch answers 0 for it at once and abandons it; a live request goes unanswered, and its
   * sender times out). Called at most once; a write completing after all still calls `reply`.
   */
  unsent?: () => void;
}

/**
 * One live event on its way to the recipient's sockets on this edge. Answered "sent" as soon as
 * one write completed; what makes that answer true is the fallback: if no socket proves
 * receipt (herald.v1 ack, plain pong) before LIVE_PROOF_TIMEOUT_MS, or every socket closes first,
 * the event is stored once in the recipient's queue with the same id. One socket's proof is enough
 * (the recipient has it); in the normal case nothing is stored.
 */
export class LiveDelivery {
  readonly #event: EdgeEvent;
  readonly #hooks: LiveDeliveryHooks;
  #handed = 0;
  #failed = 0;
  #proven = false;
  #replied = false;
  #stored = false;
  /** Answered "not sent" already (a batch's): a write completing later changes nothing. */
  #abandoned = false;
  #saidUnsent = false;

  constructor(event: EdgeEvent, hooks: LiveDeliveryHooks) {
    this.#event = event;
    this.#hooks = hooks;
  }

  /** The Delivery for one socket's write; call {@link handed} if the socket took it. */
  forSocket(): Delivery {
    let failed = false;
    const fail = () => {
      if (failed) return;
      failed = true;
      this.#failed++;
      if (!this.#replied && this.#failed >= this.#handed) this.#unsent();
      this.#storeIfUnproven();
    };
    return {
      live: true,
      written: () => {
        this.#hooks.wrote();
        if (this.#replied || this.#abandoned) return;
        this.#replied = true;
        this.#hooks.reply(this.#handed);
        this.#storeIfUnproven();
      },
      proven: () => {
        this.#proven = true;
      },
      lost: fail,
      overdue: fail,
    };
  }

  /** A socket took the write. Called synchronously after its write, before any Delivery callback. */
  handed(): void {
    this.#handed++;
  }

  /**
   * Every socket has been offered the write: with none taking it, the event is unsent at once.
   * Called once, after the last {@link handed}.
   */
  offered(): void {
    if (this.#handed === 0) this.#unsent();
  }

  /**
   * Gives up on an event no write has completed for yet (the batch answered it "not sent", and
   * its sender queues it): a later completion neither answers nor stores it. True if it was
   * abandoned, false if it had already been answered "sent".
   */
  abandon(): boolean {
    if (this.#replied) return false;
    this.#abandoned = true;
    return true;
  }

  #unsent(): void {
    if (this.#replied || this.#abandoned || this.#saidUnsent) return;
    this.#saidUnsent = true;
    this.#hooks.unsent?.();
  }

  /**
   * Only an event answered "sent" is stored: one whose write never completed got no answer, and
   * its sender queues it after the request times out (storing it here too would deliver it twice).
   */
  #storeIfUnproven(): void {
    if (!this.#replied || this.#proven || this.#stored || this.#failed < this.#handed) return;
    this.#stored = true;
    this.#hooks.store(this.#event);
  }
}
