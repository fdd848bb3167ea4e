import type { Logger } from '@herald/kit';
import { HeraldError } from '@herald/proto';
import type { Admission, QueuedRecipients } from '@herald/queue';
import type { IngressMetrics } from './metrics.js';
import type { Target } from './target.js';

export interface RecipientCeilingDeps {
  queuedRecipients: QueuedRecipients;
  metrics: Pick<IngressMetrics, 'queuePublishes'>;
  logger: Logger;
}

/**
 * The queue's ceiling on recipients (QUEUE_MAX_RECIPIENTS): the refusal to answer when this
 * recipient holds no events and the queue already holds events for that many recipients. A
 * recipient who holds events is never refused here, and nothing stored is touched. When the count
 * cannot be read, the publish decides (as for the plan's cap).
 */
export async function recipientCeilingReached(
  deps: RecipientCeilingDeps,
  target: Target,
): Promise<HeraldError | undefined> {
  let admission: Admission;
  try {
    admission = await deps.queuedRecipients.admit(target.account, target.recipient);
  } catch (err) {
    deps.logger.debug({ err: String(err) }, "could not count the queue's recipients: publishing");
    return undefined;
  }
  if (admission.admitted) return undefined;
  deps.metrics.queuePublishes.inc({ result: 'recipients_full' });
  return new HeraldError(
    'queue_recipients_full',
    `The offline queue already holds events for ${admission.recipients} recipients, the most QUEUE_MAX_RECIPIENTS=${deps.queuedRecipients.max} allows, and this recipient has none queued: nothing was stored (recipients with events queued are still queued for); retry once recipients have connected and retention has removed what they received, or ask the operator to raise QUEUE_MAX_RECIPIENTS`,
    { field: 'recipient' },
  );
}
