import type { Logger } from '@herald/kit';
import { isNotFound, type NatsRequester } from '@herald/nats';
import { subjects } from '@herald/proto';
import {
  floorStands,
  type QueueFloors,
  queueConsumerConfig,
  queueConsumerName,
  storesAnythingFor,
} from '@herald/queue';
import type {
  Consumer,
  ConsumerConfig,
  ConsumerInfo,
  ConsumerUpdateConfig,
  JetStreamClient,
  JetStreamManager,
} from 'nats';

/** How long a JetStream API call may take (nats.js's own default), ms. */
const JS_API_TIMEOUT_MS = 5000;
const NS_PER_MS = 1_000_000;

export interface QueueLookupDeps {
  js: JetStreamClient;
  jsm: Promise<JetStreamManager>;
  /** Request/reply without nats.js's Error objects, for the connect-time lookup. */
  requester: NatsRequester;
  logger: Logger;
  /** The recipient's partition stream (QueueLayout.streamOf). */
  stream: string;
  account: string;
  recipient: string;
  /** ack_wait and max_ack_pending of the consumer, ms and count. */
  ackWaitMs: number;
  maxAckPending: number;
  /**
   * Create the consumer with its state in memory (QUEUE_CONSUMER_MEMORY). An existing consumer of
   * the other kind is a create refused for its config: it is used as it is, like one of an earlier
   * release (its storage cannot be changed).
   */
  memoryState?: boolean;
  /**
   * Recorded ack floors (lib/queue ack-floors.ts): a memory-state consumer that has delivered
   * nothing yet (new, or re-created after a nats-server restart) is first reset to start after the
   * recipient's recorded floor (nothing is deleted). Without it such a consumer starts at the first
   * stored event.
   */
  floors?: QueueFloors;
}

export interface FoundConsumer {
  consumer: Consumer;
  /** Its num_ack_pending when found: deliveries another session (or a dead edge) has not settled. */
  ackPending: number;
  /** Its state is in nats-server's memory (lost on a restart): the drain records its ack floor. */
  memoryState: boolean;
  /**
   * Its ack policy is AckAll (every consumer created since): acked once per run at the proven
   * floor. A consumer made before keeps explicit acks (a policy cannot be updated).
   */
  ackAll: boolean;
  /** Its last delivery sequence when found (a drain that then sees every next one holds all). */
  deliveredSeq: number;
}

/**
 * The recipient's consumer, creating it when the stream holds something for them; undefined when
 * nothing is stored for them (no consumer is needed or created then).
 *
 * The stream is asked first: most connects are of recipients with nothing stored, and for them
 * that one call settles it (a consumer left over with everything acked and deleted has nothing to
 * deliver; an event stored after this call comes with a QueuedNotice, which checks again).
 *
 * Then ONE call, whether or not the consumer exists: CONSUMER.CREATE with this edge's config
 * creates it, or answers the existing consumer's info when its config is the same (the server
 * treats an identical create as a no-op); the Consumer is built from that info without another
 * lookup. Before, a storm of reconnects paid a consumer info (404), a create and a second info per
 * recipient (issue 11's reconnect storm). Only when the create is refused (a
 * consumer with another config: an edge of an earlier release, whose default ack_wait was 30 s, or
 * another max_ack_pending, or explicit acks, which a consumer keeps: the policy cannot be updated,
 * so such a consumer pays the refused create and an info at each connect until retention reaps it) does it fall back to info and, when ack_wait or max_ack_pending differ
 * from this edge's, one update of both: the short ack_wait is what brings an edge crash's in-flight
 * events back within the reconnect contract, and after the update the next connect's create matches
 * again (without the update, after a change of MAX_ACK_PENDING every consumer made before would pay
 * the refused create and the info on every connect until retention reaped it).
 */
export async function findQueueConsumer(deps: QueueLookupDeps): Promise<FoundConsumer | undefined> {
  const { js, account, recipient, stream } = deps;
  const subject = subjects.queue(account, recipient);
  if (!(await storesAnythingFor(deps.requester, stream, subject, JS_API_TIMEOUT_MS)))
    return undefined;
  const name = queueConsumerName(account, recipient);
  const jsm = await deps.jsm;
  const config = queueConsumerConfig(account, recipient, {
    ackWaitMs: deps.ackWaitMs,
    maxAckPending: deps.maxAckPending,
    memoryState: deps.memoryState === true,
  });
  let info: ConsumerInfo;
  try {
    // lib/queue spells the config in JetStream's wire strings; nats.js types the same strings as enums.
    info = await jsm.consumers.add(stream, config as unknown as Partial<ConsumerConfig>);
  } catch (err) {
    if (isNotFound(err)) throw err;
    // It exists with another config (or another edge's differing create won a race): use it.
    deps.logger.debug(
      { err: String(err), consumer: name },
      'consumer create refused: using the existing one',
    );
    info = await jsm.consumers.info(stream, name);
    // Move what can be moved to this edge's config, once: afterwards the create is the same as the
    // consumer's and is answered with its info again (the create alone, not the create and an
    // info, on every connect). Its storage kind (mem_storage) cannot be changed, so such a
    // consumer keeps taking this path.
    const moved: Partial<ConsumerUpdateConfig> = {};
    if (info.config.ack_wait !== deps.ackWaitMs * NS_PER_MS)
      moved.ack_wait = deps.ackWaitMs * NS_PER_MS;
    if (info.config.max_ack_pending !== deps.maxAckPending)
      moved.max_ack_pending = deps.maxAckPending;
    if (Object.keys(moved).length > 0) {
      const before = info;
      info = await jsm.consumers.update(stream, name, moved).catch((e: unknown) => {
        deps.logger.debug({ err: String(e), consumer: name }, 'consumer update refused');
        return before;
      });
    }
  }
  const memoryState = info.config.mem_storage === true;
  // Nothing delivered yet: the consumer sequence, not the stream one (a new consumer reports
  // the stream's first sequence minus one there, which is 0 only while nothing was ever deleted).
  if (memoryState && deps.floors && info.delivered.consumer_seq === 0)
    info = await resumeAfterRecordedFloor(deps, deps.floors, jsm, subject, info);
  return {
    consumer: js.consumers.getPullConsumerFor(info),
    ackPending: info.num_ack_pending,
    memoryState,
    ackAll: (info.config.ack_policy as string) === 'all',
    deliveredSeq: info.delivered.consumer_seq,
  };
}

/**
 * Moves a consumer that has delivered nothing yet past what the recipient's recorded floor says
 * was acked, so that is not delivered again: a reset to the floor's next sequence (its ack floor
 * then reads the recorded one, as for a consumer created with `opt_start_seq` there; its config
 * stays DeliverAll, the one every create matches). Not a deletion: acked events stay stored until
 * retention, for the recipient's other devices (per-device delivery reads the stream). Only
 * forward (a floor at or below the consumer's own changes nothing), and only for a floor of this
 * stream (floorStands). Best effort: when it fails, those events are delivered again (at least
 * once holds). Answers the consumer's info, after the reset when there was one.
 */
async function resumeAfterRecordedFloor(
  deps: QueueLookupDeps,
  floors: QueueFloors,
  jsm: JetStreamManager,
  subject: string,
  info: ConsumerInfo,
): Promise<ConsumerInfo> {
  try {
    const floor = await floors.read(deps.account, deps.recipient);
    if (!floor || floor.seq <= info.ack_floor.stream_seq) return info;
    if (!(await floorStands(jsm, deps.stream, subject, floor))) return info;
    const reset = await floors.resumeAfter(deps.stream, info.name, floor);
    if (!reset) return info;
    deps.logger.info(
      { consumer: info.name, from: info.ack_floor.stream_seq, to: floor.seq },
      'consumer moved past the recorded ack floor',
    );
    return reset;
  } catch (err) {
    deps.logger.warn(
      { err: String(err), consumer: info.name },
      'recorded ack floor not applied: acked events may be delivered again',
    );
    return info;
  }
}
