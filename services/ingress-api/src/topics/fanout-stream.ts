import { JsErrCode, jsErrCode } from '@herald/nats';
import { FANOUT_CONSUMER, FANOUT_STREAM, fanoutSubjects } from '@herald/proto';
import {
  AckPolicy,
  DiscardPolicy,
  type JetStreamManager,
  RetentionPolicy,
  StorageType,
  type StreamConfig,
} from 'nats';
import type { IngressConfig } from '../config.js';

const NS_PER_MS = 1_000_000;
/** Chunks one worker may hold unacked, over every instance; far above FANOUT_WORKERS × instances. */
const MAX_ACK_PENDING = 10_000;

/**
 * The fan-out's work queue (issue 44): one message per chunk of a topic event's members, kept on
 * file until a worker acks it (every copy of the chunk durably accepted), and the one durable
 * consumer every ingress instance's workers pull from, so a chunk goes to one worker at a time
 * and to another once FANOUT_ACK_WAIT_MS passes without word from the first.
 */
export async function ensureFanoutStream(
  jsm: JetStreamManager,
  config: Pick<IngressConfig, 'FANOUT_STREAM_MAX_BYTES' | 'FANOUT_ACK_WAIT_MS' | 'NATS_REPLICAS'>,
): Promise<void> {
  const wanted: Partial<StreamConfig> = {
    name: FANOUT_STREAM,
    subjects: [fanoutSubjects.all],
    retention: RetentionPolicy.Workqueue,
    storage: StorageType.File,
    // A full stream refuses the topic event (503) rather than dropping an accepted chunk.
    discard: DiscardPolicy.New,
    max_bytes: config.FANOUT_STREAM_MAX_BYTES,
    num_replicas: config.NATS_REPLICAS,
  };
  try {
    await jsm.streams.info(FANOUT_STREAM);
    await jsm.streams.update(FANOUT_STREAM, wanted);
  } catch (err) {
    if (jsErrCode(err) !== JsErrCode.StreamNotFound) throw err;
    try {
      await jsm.streams.add(wanted);
    } catch (e) {
      // Another instance made it first.
      if (jsErrCode(e) !== JsErrCode.StreamNameInUse) throw e;
    }
  }
  await jsm.consumers.add(FANOUT_STREAM, {
    durable_name: FANOUT_CONSUMER,
    ack_policy: AckPolicy.Explicit,
    ack_wait: config.FANOUT_ACK_WAIT_MS * NS_PER_MS,
    max_ack_pending: MAX_ACK_PENDING,
    max_deliver: -1,
  });
}
