import { randomUUID } from 'node:crypto';
import { EventHeaders, subjects } from '@herald/proto';
import { QueueLayout } from '@herald/queue';
import { headers } from 'nats';
import { closedLoop } from '../load/pace.js';
import type { BenchContext } from './context.js';

/** The services' queue layout: the bench starts them with the default QUEUE_PARTITIONS. */
export const queueLayout = new QueueLayout();

/**
 * Stores `each` events for every recipient exactly as the contract (proto's subjects and
 * EventHeaders) says ingress stores an offline event: the payload bytes on the recipient's queue
 * subject with the event id, timestamp and dedup id in headers. Publishing directly rather than
 * through POST /notify keeps the preparation of 50,000 events a second or two (figure 3 measures
 * the ingress path itself). Round-robin, so recipients' events interleave in the stream as real
 * traffic would. Throws unless every event was stored.
 */
export async function queueEvents(
  ctx: BenchContext,
  recipients: readonly string[],
  each: number,
  seqBase: number,
): Promise<void> {
  const total = recipients.length * each;
  const loop = await closedLoop(
    ctx.config.concurrency,
    { maxCount: total, durationMs: ctx.config.drainTimeoutMs * 4 },
    async (i) => {
      const id = randomUUID();
      const h = headers();
      h.set(EventHeaders.id, id);
      h.set(EventHeaders.ts, String(Date.now()));
      const recipient = recipients[i % recipients.length] as string;
      await ctx.js.publish(
        subjects.queue(ctx.stack.account, recipient),
        ctx.payload.make(seqBase + i),
        {
          headers: h,
          msgID: id,
          expect: { streamName: queueLayout.streamOf(ctx.stack.account, recipient) },
        },
      );
    },
  );
  if (loop.completed !== total) {
    throw new Error(
      `queued ${loop.completed} of ${total} events (${loop.failed} failed: ${loop.firstError ?? 'time bound reached'})`,
    );
  }
}

/**
 * Empties every queue partition stream and drops every consumer on them, keeping its exact configuration (read
 * back from the server, so whatever ingress configured stays): retention's job done at once. Every
 * run then starts from the same state. Without it each run's consumers would be created over a
 * stream grown by every earlier run (a filtered consumer scans the stream on nats-server 2.9), and
 * thousands of durable consumers would pile up; deleting them one by one cost ~3.5 ms each here.
 * Only while no socket is open: the edge's drainers see their consumers vanish otherwise.
 */
export async function resetQueue(ctx: BenchContext): Promise<void> {
  for (const stream of queueLayout.streams) {
    const { config } = await ctx.jsm.streams.info(stream);
    await ctx.jsm.streams.delete(stream);
    await ctx.jsm.streams.add(config);
  }
}
