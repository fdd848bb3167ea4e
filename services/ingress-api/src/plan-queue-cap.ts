import type { Logger } from '@herald/kit';
import { HeraldError } from '@herald/proto';
import type { RecipientDepth } from '@herald/queue';
import type { IngressMetrics } from './metrics.js';
import type { Target } from './target.js';

export interface PlanQueueCapDeps {
  recipientDepth?: RecipientDepth | undefined;
  metrics: Pick<IngressMetrics, 'queuePublishes'>;
  logger: Logger;
  limits: { queueMaxPerRecipient: number };
}

/** Whether the plan's cap is below the stream's own ceiling, so `planQueueFull` must look. */
export function planCapApplies(deps: PlanQueueCapDeps, target: Target): boolean {
  return (
    deps.recipientDepth !== undefined &&
    target.key.limits.queue_per_recipient < deps.limits.queueMaxPerRecipient
  );
}

/**
 * The plan's cap on a recipient's undelivered events, below the stream's own per-subject ceiling
 * (QUEUE_MAX_PER_RECIPIENT, which JetStream enforces by refusing the publish): the refusal to
 * answer when the recipient is at it, naming the depth; nothing older is ever dropped. When the
 * depth cannot be read, the publish decides.
 */
export async function planQueueFull(
  deps: PlanQueueCapDeps,
  target: Target,
): Promise<HeraldError | undefined> {
  const cap = target.key.limits.queue_per_recipient;
  if (!deps.recipientDepth || !planCapApplies(deps, target)) return undefined;
  let room: Awaited<ReturnType<RecipientDepth['room']>>;
  try {
    room = await deps.recipientDepth.room(target.account, target.recipient, cap);
  } catch (err) {
    deps.logger.debug({ err: String(err) }, 'could not read a recipient queue depth: publishing');
    return undefined;
  }
  if (!room.full) return undefined;
  deps.metrics.queuePublishes.inc({ result: 'full' });
  const whose =
    target.key.kind === 'test' ? 'Test keys allow' : `the ${target.key.plan} plan allows`;
  return new HeraldError(
    'queue_full',
    `This recipient already has ${room.depth} undelivered events queued and ${whose} ${cap} per recipient: nothing was stored and nothing older was dropped; retry once the recipient has connected and received them, or move to a bigger plan`,
    { field: 'recipient' },
  );
}
