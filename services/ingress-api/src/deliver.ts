import type { Logger } from '@herald/kit';
import { EventMsgHdrs, type NatsRequester, type Publisher } from '@herald/nats';
import { EventHeaders, HeraldError, recipientSubjects } from '@herald/proto';
import {
  enqueue,
  type QueuedEvent,
  type QueuedRecipients,
  type QueueLayout,
  type RecipientDepth,
} from '@herald/queue';
import type { MsgHdrs } from 'nats';
import type { InboxKeeper } from './inbox-keep.js';
import { type LiveOutcome, pushLive } from './live-push.js';
import type { IngressMetrics } from './metrics.js';
import { notDelivered, type Outcome, queued, sent } from './outcome.js';
import { planCapApplies, planQueueFull } from './plan-queue-cap.js';
import { recipientCeilingReached } from './recipient-ceiling.js';
import type { Target } from './target.js';

export type { Target } from './target.js';

/**
 * What a batch already did for an event before its deliver step: its time, how its live push
 * went (live-batch.ts; absent, deliver pushes it), whether the inbox already keeps it.
 */
export interface PushedLive {
  /** Epoch ms at which ingress accepted it: the queued copy and the inbox carry the same. */
  ts: number;
  live?: LiveOutcome | undefined;
  /** Inbox keys: the batch kept it in the inbox store already. */
  kept?: boolean | undefined;
}

export interface DeliverDeps {
  /** Where the `rt.queued` notice goes (the pipeline's TurnPublisher). */
  publisher: Publisher;
  requester: NatsRequester;
  /** Which partition stream holds a recipient's queue. */
  layout: QueueLayout;
  /** The plan's per-recipient queue cap (507 queue_full); only the stream's ceiling when absent. */
  recipientDepth?: RecipientDepth | undefined;
  /** The queue's ceiling on recipients (507 queue_recipients_full); none when absent. */
  queuedRecipients?: QueuedRecipients | undefined;
  metrics: Pick<IngressMetrics, 'queuePublishes'>;
  logger: Logger;
  /** Inbox mode: keeps an inbox key's events before anything else happens to them. */
  inbox?: InboxKeeper | undefined;
  limits: {
    /** How long a live request may take to reach the edges holding the recipient, ms. */
    liveTimeoutMs: number;
    /**
     * How long, beyond that, those edges have to prove the event or say no socket can, ms
     * (LIVE_PROOF_WAIT_MS): the edge answers at once either way, so this is waited out only for
     * an edge that is gone or far behind.
     */
    liveProofWaitMs: number;
    /** How long JetStream may take to ack a store, ms. */
    publishTimeoutMs: number;
    /** The stream's per-recipient ceiling (QUEUE_MAX_PER_RECIPIENT). */
    queueMaxPerRecipient: number;
  };
  /** Epoch ms. */
  now: () => number;
}

/**
 * Step 4 of a dispatch: push live (unless `pushed` says how a batch's push went), else queue.
 * `sent` means an edge confirmed a socket received it; `queued` means JetStream acked the store;
 * anything that confirms neither is refused or failed. The event's headers (id, timestamp) are
 * built once and carried to both.
 */
export function createDeliver(deps: DeliverDeps) {
  const { publisher, requester, metrics, logger, limits } = deps;
  // Nobody subscribed is known at once (no responders); an edge that holds the recipient answers
  // when a socket proved it or none can, so giving up earlier would only queue what a reader under
  // load is about to prove, and deliver it twice (docs/architecture-history.md, "No duplicates
  // from overload").
  const liveBudgetMs = limits.liveTimeoutMs + limits.liveProofWaitMs;

  return async function deliver(
    target: Target,
    id: string,
    msgId: string,
    pushed?: PushedLive,
  ): Promise<Outcome> {
    const ts = pushed?.ts ?? deps.now();
    const eventHeaders = headersOf(id, ts, target.topic?.name);
    const { account, recipient, payload } = target;
    // Inbox mode (a key with inbox_days): kept first, before it is pushed, queued or answered. A
    // refusal (inbox_full) answers alone; a store that does not answer throws 503 unavailable.
    // A key without inbox mode never reaches the store.
    if (target.key.inbox_days && !pushed?.kept) {
      if (!deps.inbox) throw new Error('deliver: an inbox key and no inbox store');
      const [refusal] = await deps.inbox.keep(target.key, [
        { recipient, id, ts, payload, topic: target.topic?.name },
      ]);
      if (refusal) return notDelivered(refusal, id);
    }
    // The live, queue and notice subjects and the queue's stream from one check of the tokens.
    const names = recipientSubjects(account, recipient);
    // Plain literals, not spreads of `target`: copying the key along was measurable per event.
    const live =
      pushed?.live ??
      (await pushLive(
        requester,
        { account, recipient, payload, headers: eventHeaders, subject: names.live },
        liveBudgetMs,
      ));
    if (live.kind === 'sent') return sent(id);
    if (live.kind !== 'offline') {
      logger.warn(
        {
          id,
          account: target.account,
          live: live.kind,
          reason: 'reason' in live ? live.reason : undefined,
        },
        'live push unconfirmed: queueing',
      );
    }
    // Most plans' caps are the stream's own: then there is nothing to look up (and no await).
    const full = planCapApplies(deps, target) ? await planQueueFull(deps, target) : undefined;
    if (full) return notDelivered(full, id);
    const { queuedRecipients } = deps;
    const crowded = queuedRecipients
      ? await recipientCeilingReached({ queuedRecipients, metrics, logger }, target)
      : undefined;
    if (crowded) return notDelivered(crowded, id);
    const queuedEvent: QueuedEvent = {
      account,
      recipient,
      payload,
      id,
      msgId,
      headers: eventHeaders,
      stream: deps.layout.streamOfSlot(names.slot),
      subjects: names,
    };
    const stored = await enqueue(publisher, requester, queuedEvent, limits.publishTimeoutMs);
    switch (stored.kind) {
      case 'stored':
        metrics.queuePublishes.inc({ result: stored.duplicate ? 'duplicate' : 'stored' });
        if (!stored.duplicate) deps.recipientDepth?.stored(target.account, target.recipient);
        return queued(id);
      case 'recipient_full':
        metrics.queuePublishes.inc({ result: 'full' });
        return notDelivered(
          new HeraldError(
            'queue_full',
            `This recipient already has ${limits.queueMaxPerRecipient} queued events (QUEUE_MAX_PER_RECIPIENT): nothing was stored and nothing older was dropped; retry once the recipient has connected and received them`,
            { field: 'recipient' },
          ),
          id,
        );
      case 'store_full':
        metrics.queuePublishes.inc({ result: 'full' });
        logger.error({ id, description: stored.description }, 'offline queue store is full');
        return notDelivered(
          new HeraldError(
            'queue_full',
            'The offline queue is full (stream storage limit): nothing was stored; retry later or ask the operator to raise QUEUE_MAX_BYTES',
          ),
          id,
        );
      case 'error':
        metrics.queuePublishes.inc({ result: 'error' });
        logger.error(
          { id, account: target.account, reason: stored.reason },
          'could neither push nor store an event',
        );
        return notDelivered(
          new HeraldError(
            'unavailable',
            live.kind === 'offline'
              ? 'The recipient is offline and the offline queue is unavailable: retry shortly'
              : 'No edge confirmed the live push and the offline queue is unavailable: retry shortly',
          ),
          id,
        );
    }
  };
}

export type Deliver = ReturnType<typeof createDeliver>;

function headersOf(id: string, ts: number, topic: string | undefined): MsgHdrs {
  // Encoded once for the live push; the JetStream publish extends the same text (event-headers.ts).
  const headers = new EventMsgHdrs().add(EventHeaders.id, id).add(EventHeaders.ts, String(ts));
  // A topic event's copy (issue 44): the edge puts the topic on the event's frame.
  return topic === undefined ? headers : headers.add(EventHeaders.topic, topic);
}
