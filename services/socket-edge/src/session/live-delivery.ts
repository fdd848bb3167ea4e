import type { LiveReply } from '@herald/proto';
import type { Delivery } from '../socket/delivery.js';

export interface LiveDeliveryHooks {
  /** One socket's write completed (counted in metrics). */
  wrote: () => void;
  /**
   * The first socket proved receipt (a herald.v1 ack of the id, or the pong of a proof ping sent
   * after the frame): answer the sender "sent" with how many sockets the frame was handed to.
   */
  reply: (sockets: number) => void;
  /**
   * No socket can prove it any more (each one took the write and then closed, failed it or let
   * its proof go overdue), or no socket took it: the event is not sent (a batch answers 0 for it
   * at once and abandons it; a live request goes unanswered, and its sender queues the event when
   * its request times out). Called at most once; a proof coming after all still calls `reply`.
   */
  unsent?: () => void;
}

/**
 * One live event on its way to the recipient's sockets on this edge. Answered "sent" only once a
 * socket proved receipt, so the answer (ingress's 200) is true whatever happens next, a crash of
 * this edge included: until then the sender holds the event, and queues it if no answer comes
 * within its LIVE_TIMEOUT_MS + LIVE_PROOF_WAIT_MS (docs/architecture-history.md, "Delivery proof
 * (issue 10)"). One socket's proof is enough (the recipient has it); nothing is stored here.
 */
export class LiveDelivery {
  readonly #hooks: LiveDeliveryHooks;
  #handed = 0;
  #failed = 0;
  #replied = false;
  /** Answered "not sent" already (a batch's): a proof coming later changes nothing. */
  #abandoned = false;
  #saidUnsent = false;

  constructor(hooks: LiveDeliveryHooks) {
    this.#hooks = hooks;
  }

  /** The Delivery for one socket's write; call {@link handed} if the socket took it. */
  forSocket(): Delivery {
    let failed = false;
    const fail = () => {
      if (failed) return;
      failed = true;
      this.#failed++;
      if (this.#failed >= this.#handed) this.#unsent();
    };
    return {
      live: true,
      written: () => this.#hooks.wrote(),
      proven: () => {
        if (this.#replied || this.#abandoned) return;
        this.#replied = true;
        this.#hooks.reply(this.#handed);
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
   * Gives up on an event no socket has proven yet (the batch answered it "not sent", and its
   * sender queues it): a later proof does not answer it. True if it was abandoned, false if it had
   * already been answered "sent".
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
}

const encoder = new TextEncoder();
/** The encoded replies `{v:1, sockets}` for the common socket counts, built once. */
const LIVE_REPLIES = Array.from({ length: 8 }, (_, sockets) => encodeReply(sockets));

/** A live request's answer: sockets > 0 once one proved the event, 0 when none can (queue it). */
export function liveReply(sockets: number): Uint8Array {
  return LIVE_REPLIES[sockets] ?? encodeReply(sockets);
}

function encodeReply(sockets: number): Uint8Array {
  return encoder.encode(JSON.stringify({ v: 1, sockets } satisfies LiveReply));
}
