import { subjects } from '@herald/proto';
import {
  parseQueueFloorKey,
  type QueueApi,
  type QueueFloors,
  type QueueLayout,
} from '@herald/queue';
import { deleteAcked, type SweepContext } from './recipient-sweep.js';

export interface FloorSweepContext extends Omit<SweepContext, 'api'> {
  floors: QueueFloors;
  layout: QueueLayout;
  /** The run's API of each partition stream, by stream name. */
  apis: ReadonlyMap<string, QueueApi>;
  /** Takes one of the run's API tokens (a floor read is a JetStream call too). */
  take(): Promise<void>;
}

/**
 * The recorded ack floors' pass (lib/queue ack-floors.ts): deletes the events up to each
 * recipient's recorded floor, one by one as the consumer pass does. It is what keeps "delivered
 * events are deleted weekly" for recipients whose consumer a nats-server restart lost (the edges
 * keep consumer state in memory by default) and who have not connected since: no consumer lists
 * them any more. A floor counts only while the event at its sequence is the recorded one, on the
 * recipient's subject (the same check as the edge's); for most recipients the first stored event
 * is already above it (the consumer pass deleted up to the consumer's own floor), one call each.
 * Returns the events deleted.
 */
export async function sweepRecordedFloors(ctx: FloorSweepContext): Promise<number> {
  let deleted = 0;
  for await (const key of await ctx.floors.keys()) {
    if (ctx.stopping()) break;
    const ids = parseQueueFloorKey(key);
    if (!ids) continue;
    const api = ctx.apis.get(ctx.layout.streamOf(ids.account, ids.recipient));
    if (!api) continue;
    await ctx.take();
    const floor = await ctx.floors.read(ids.account, ids.recipient);
    if (!floor || floor.stream !== api.stream) continue;
    const subject = subjects.queue(ids.account, ids.recipient);
    const first = await api.firstEvent(subject);
    if (!first || first.seq > floor.seq) continue;
    const at = await api.firstEvent(subject, floor.seq);
    if (at?.seq !== floor.seq || at.id !== floor.id) continue;
    deleted += await deleteAcked({ ...ctx, api }, subject, floor.seq);
  }
  return deleted;
}
