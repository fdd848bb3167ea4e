import type { Logger } from '@herald/kit';
import type { QueueFloors } from '@herald/queue';
import type { JsMsg } from 'nats';

/**
 * After a drain caught up: delays before reading the consumer's ack floor to record it, ms. The
 * acks travel as plain publishes and nats-server applies them apart from API requests, so the
 * floor is read a little later, and again later (twice) if it has not reached the last ack yet; a
 * newer candidate starts the delays again.
 */
const FLOOR_READ_DELAYS_MS = [250, 1000, 5000] as const;

export interface FloorRecorderDeps {
  floors: QueueFloors;
  logger: Logger;
  account: string;
  recipient: string;
  /** The recipient's partition stream and durable consumer. */
  stream: string;
  consumer: string;
}

/**
 * Records a recipient's ack floor for a consumer whose state is in nats-server's memory, so that
 * a nats-server restart (which forgets the consumer) does not bring back what was acked up to it
 * (lib/queue ack-floors.ts; the next consumer deletes up to the floor before delivering). One per
 * drain that consumed, made with the drain's writing side.
 */
export class FloorRecorder {
  readonly #deps: FloorRecorderDeps;
  /** The consumer being drained keeps its state in memory: only then is a floor recorded. */
  memoryState = false;
  /** The last acked delivery of a drain that caught up, waiting to be recorded as the floor. */
  #candidate: { seq: number; id: string } | undefined;
  #timer: NodeJS.Timeout | undefined;
  /** Highest floor recorded by this drain. */
  #recordedSeq = 0;

  constructor(deps: FloorRecorderDeps) {
    this.#deps = deps;
  }

  /**
   * Every delivery was acked. When that was the last stored event (nothing pending on the consumer
   * when it came, nothing waiting to be written) its floor is recorded shortly.
   */
  caughtUp(msg: JsMsg, id: string, waiting: boolean): void {
    if (!this.memoryState || waiting) return;
    let info: JsMsg['info'];
    try {
      info = msg.info;
    } catch {
      return;
    }
    if (info.pending !== 0 || info.streamSequence <= this.#recordedSeq) return;
    this.#candidate = { seq: info.streamSequence, id };
    clearTimeout(this.#timer);
    this.#schedule(0);
  }

  #schedule(attempt: number): void {
    const delay = FLOOR_READ_DELAYS_MS[attempt];
    if (delay === undefined) {
      this.#candidate = undefined;
      return;
    }
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      void this.#record(attempt);
    }, delay);
    this.#timer.unref();
  }

  /**
   * Records the candidate as the recipient's floor once the consumer's ack floor, as nats-server
   * reports it, is at or above it. The server's floor covers every session's deliveries (a socket
   * on another edge may hold an earlier event unacked), which this drain's own view does not.
   */
  async #record(attempt: number): Promise<void> {
    const candidate = this.#candidate;
    if (!candidate) return;
    const { floors, stream, consumer } = this.#deps;
    try {
      const info = await floors.consumerFloor(stream, consumer);
      if (this.#candidate !== candidate || info?.memoryState !== true) return;
      if (info.ackFloor < candidate.seq) {
        this.#schedule(attempt + 1);
        return;
      }
      this.#candidate = undefined;
      await floors.record(this.#deps.account, this.#deps.recipient, {
        v: 1,
        stream,
        seq: candidate.seq,
        id: candidate.id,
      });
      this.#recordedSeq = Math.max(this.#recordedSeq, candidate.seq);
    } catch (err) {
      if (this.#candidate === candidate) this.#candidate = undefined;
      this.#deps.logger.debug(
        { err: String(err), consumer },
        'ack floor not recorded: acked events may come again after a nats-server restart',
      );
    }
  }
}
