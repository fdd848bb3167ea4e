import type { Logger } from '@herald/kit';
import { EventHeaders, unprovenLiveMsgId } from '@herald/proto';
import { enqueue, type NatsRequester, type QueueLayout } from '@herald/queue';
import { headers, type NatsConnection } from 'nats';
import type { EdgeEvent } from './edge-event.js';
import type { EdgeMetrics } from './metrics.js';

/** Attempts at storing one event while JetStream does not answer, RETRY_MS apart. */
const MAX_ATTEMPTS = 5;
const RETRY_MS = 1000;
/** How long one store may wait for JetStream's publish ack (nats.js's own default), ms. */
const PUBLISH_TIMEOUT_MS = 5000;

export interface UnprovenStoreDeps {
  nc: NatsConnection;
  /** The edge's muxed requester: the store is lib/queue's enqueue, the same publish as ingress's. */
  requester: NatsRequester;
  /** Which partition stream holds a recipient's queue. */
  layout: QueueLayout;
  metrics: EdgeMetrics;
  logger: Logger;
}

/**
 * Stores live events that were answered "sent" but never proven received, in the recipient's
 * queue, exactly as ingress queues an event (same id and ts headers, then a QueuedNotice), so the
 * recipient's next connect delivers them and the SDK drops a copy it already had by id. The
 * Nats-Msg-Id `<account>:evt:<id>` makes JetStream keep one copy when several sockets or edges
 * store the same event within the stream's duplicate window.
 */
export class UnprovenStore {
  readonly #deps: UnprovenStoreDeps;
  readonly #pending = new Set<Promise<void>>();

  constructor(deps: UnprovenStoreDeps) {
    this.#deps = deps;
  }

  store(account: string, recipient: string, event: EdgeEvent): void {
    const done: Promise<void> = this.#publish(account, recipient, event).finally(() =>
      this.#pending.delete(done),
    );
    this.#pending.add(done);
  }

  /** Resolves once every store under way has finished (the edge's shutdown waits for it). */
  async flush(): Promise<void> {
    while (this.#pending.size > 0) await Promise.allSettled([...this.#pending]);
  }

  async #publish(account: string, recipient: string, event: EdgeEvent): Promise<void> {
    const { nc, requester, metrics, logger } = this.#deps;
    for (let attempt = 1; ; attempt++) {
      // Fresh headers per attempt: enqueue adds the dedup id and expected stream to them.
      const h = headers();
      h.set(EventHeaders.id, event.id);
      h.set(EventHeaders.ts, String(event.ts));
      const outcome = await enqueue(
        nc,
        requester,
        {
          account,
          recipient,
          id: event.id,
          payload: event.data,
          headers: h,
          msgId: unprovenLiveMsgId(account, event.id),
          stream: this.#deps.layout.streamOf(account, recipient),
        },
        PUBLISH_TIMEOUT_MS,
      );
      if (outcome.kind === 'stored') {
        metrics.unprovenLiveStored.inc();
        return;
      }
      // A full queue stays full for seconds to hours: only an unanswered publish is retried.
      if (outcome.kind !== 'error' || attempt >= MAX_ATTEMPTS || nc.isClosed()) {
        // Ids only: never the payload.
        logger.error(
          {
            outcome: outcome.kind,
            reason: outcome.kind === 'error' ? outcome.reason : undefined,
            account,
            event: event.id,
          },
          'could not store a live event the client never proved it received',
        );
        metrics.unprovenLiveStoreFailures.inc();
        return;
      }
      await new Promise((resolve) => setTimeout(resolve, RETRY_MS));
    }
  }
}
