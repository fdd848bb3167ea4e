import { isNoMessageFound } from '@herald/nats';
import { subjects } from '@herald/proto';
import type { JsMsg, MsgRequest } from 'nats';
import type { EdgeMetrics } from '../metrics.js';
import type { EdgeSocket } from '../socket/edge-socket.js';
import { AckFloor, type ConsumerPendingState } from './ack-floor.js';
import type { DrainContext, DrainTarget } from './drain-context.js';
import { FloorRecorder } from './floor-recorder.js';
import { QueuePacer } from './queue-pacer.js';
import { QueuedDeliveries } from './queued-deliveries.js';

/** What the writing side uses of the drain's context. */
export type DrainWriterContext = Pick<DrainContext, 'logger' | 'status' | 'floors' | 'jsm'> & {
  metrics: Pick<EdgeMetrics, 'queuedDeliveries'>;
};

/**
 * The writing side of one recipient's drain: the {@link QueuePacer} that writes a delivery once
 * every socket has room for it, the {@link QueuedDeliveries} that ack or nak it on the sockets'
 * proofs, and the {@link FloorRecorder} (when floors are recorded). Made at a drain's first
 * consume: most sessions never find anything queued, and this (with its closures) would otherwise
 * be held by every idle connection.
 */
export class DrainWriter {
  readonly #deliveries: QueuedDeliveries;
  readonly #pacer: QueuePacer;
  readonly #floor: FloorRecorder | undefined;
  /** The proven floor of an AckAll consumer, made at the first run on one. */
  #ackFloor: AckFloor | undefined;
  readonly #checkConsumer: () => Promise<ConsumerPendingState | undefined>;
  readonly #nextStored: (fromSeq: number) => Promise<number | undefined>;
  #keepAlive: NodeJS.Timeout | undefined;

  /**
   * @param ctx the edge's (kept by its closures, as `target` is: nothing is copied per drain)
   * @param target the recipient and their sockets
   * @param stream the recipient's partition stream
   * @param consumer the recipient's durable consumer
   */
  constructor(ctx: DrainWriterContext, target: DrainTarget, stream: string, consumer: string) {
    const { account, recipient } = target;
    const floor = ctx.floors
      ? new FloorRecorder({
          floors: ctx.floors,
          logger: ctx.logger,
          account,
          recipient,
          stream,
          consumer,
        })
      : undefined;
    const deliveries = new QueuedDeliveries(
      (id, device) => {
        ctx.metrics.queuedDeliveries.inc();
        ctx.status.delivered(account, recipient, id, device);
      },
      () => pacer.pump(),
      floor && ((msg, id) => floor.caughtUp(msg, id, pacer.waiting > 0)),
    );
    const pacer = new QueuePacer(
      (msg) => hasRoomFor(target.sockets(), msg),
      (msg) => deliveries.write(msg, target.sockets()),
    );
    this.#deliveries = deliveries;
    this.#pacer = pacer;
    this.#floor = floor;
    this.#checkConsumer = async () => {
      const info = await (await ctx.jsm).consumers.info(stream, consumer);
      return {
        numAckPending: info.num_ack_pending,
        deliveredSeq: info.delivered.consumer_seq,
        ackFloor: info.ack_floor.stream_seq,
      };
    };
    const subject = subjects.queue(account, recipient);
    this.#nextStored = async (fromSeq) => {
      try {
        // nats.js types STREAM.MSG.GET without next_by_subj, which servers >= 2.9 accept.
        const query = { next_by_subj: subject, seq: fromSeq } as unknown as MsgRequest;
        return (await (await ctx.jsm).streams.getMessage(stream, query)).seq;
      } catch (err) {
        if (isNoMessageFound(err)) return undefined;
        throw err;
      }
    };
  }

  /** A delivery from the run: written when the sockets have room, in order. */
  offer(msg: JsMsg): void {
    this.#deliveries.floor?.delivered(msg);
    this.#pacer.offer(msg);
  }

  /**
   * A run started on a consumer (its state in memory or not: only then is its floor recorded).
   * While it runs, what is in flight or waiting is kept from expiring with `working()` every third
   * of ack_wait, so only a dead edge's deliveries come back after it.
   */
  running(run: RunState, ackWaitMs: number): void {
    if (this.#floor) this.#floor.memoryState = run.memoryState;
    if (run.ackAll) {
      const deliveries = this.#deliveries;
      this.#ackFloor ??= new AckFloor(this.#checkConsumer, this.#nextStored, () =>
        deliveries.flushAcks(),
      );
      this.#ackFloor.start(run.deliveredSeq, run.ackPending);
      deliveries.floor = this.#ackFloor;
    } else {
      this.#ackFloor?.clear();
      this.#deliveries.floor = undefined;
    }
    clearInterval(this.#keepAlive);
    this.#keepAlive = setInterval(
      () => {
        this.#deliveries.touch();
        this.#pacer.touch();
      },
      Math.max(100, Math.floor(ackWaitMs / 3)),
    );
    this.#keepAlive.unref();
  }

  /** The run ended: nothing is kept alive any more. */
  idle(): void {
    clearInterval(this.#keepAlive);
    this.#keepAlive = undefined;
  }

  /** The consumer is gone: what was in flight or waiting can no longer be acked; forget it. */
  forget(): void {
    this.#deliveries.clear();
    this.#pacer.reset();
  }

  /** The drain is stopping: from now on naks are held, for {@link takeUnsettled}. */
  hold(): void {
    this.#deliveries.hold();
  }

  /** Every delivery not acked (in flight, its nak held, or still waiting): the caller nakks them. */
  takeUnsettled(): JsMsg[] {
    this.#deliveries.nakAll();
    return [...this.#deliveries.takeHeld(), ...this.#pacer.takeAll()];
  }
}

/** What a run's consumer said at its lookup (queue-lookup.ts FoundConsumer). */
export interface RunState {
  memoryState: boolean;
  /** Its ack policy is AckAll: acked at the proven floor, not per delivery. */
  ackAll: boolean;
  /** Its last delivery sequence and its deliveries not acked, when looked up. */
  deliveredSeq: number;
  ackPending: number;
}

/** Whether every socket has room for the delivery (a drain paces itself to its slowest reader). */
function hasRoomFor(sockets: Iterable<EdgeSocket>, msg: JsMsg): boolean {
  for (const socket of sockets) if (!socket.hasRoomFor(msg.data.length)) return false;
  return true;
}
