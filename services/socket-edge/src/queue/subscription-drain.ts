import type { ConsumerMessages, NatsConnection } from 'nats';

/**
 * Unsubscribes a consume() run so that nothing the server already sent is lost: nats.js keeps the
 * subscription of a run on its `sub` field (not part of the ConsumerMessages interface), and
 * draining it delivers every message that arrives before the server confirms the unsubscribe.
 * Falls back to a flush if that field is ever missing.
 */
export async function drainSubscription(run: ConsumerMessages, nc: NatsConnection): Promise<void> {
  const sub = (run as { sub?: { drain?: () => Promise<void> } }).sub;
  if (typeof sub?.drain === 'function') {
    await sub.drain().catch(() => undefined);
    return;
  }
  await nc.flush().catch(() => undefined);
}
