import { queueConsumerName, queueStreamOf } from '@herald/queue';
import { type ConnectionOptions, connect } from 'nats';

/**
 * Whether the edge has settled what it delivered from a recipient's queue: its durable consumer
 * exists, has delivered something, and has nothing pending and nothing awaiting an ack. Read from
 * JetStream, the stack's own state, to prove an SDK ack reached the edge.
 */
export async function queueSettled(
  nats: ConnectionOptions,
  account: string,
  recipient: string,
): Promise<boolean> {
  const nc = await connect(nats);
  try {
    const jsm = await nc.jetstreamManager();
    const info = await jsm.consumers
      .info(queueStreamOf(account, recipient), queueConsumerName(account, recipient))
      .catch(() => undefined);
    if (!info) return false;
    return info.delivered.stream_seq > 0 && info.num_ack_pending === 0 && info.num_pending === 0;
  } finally {
    await nc.close();
  }
}
