import { randomUUID } from 'node:crypto';
import { EventHeaders, type QueuedNotice, subjects } from '@herald/proto';
import {
  ensureQueueStream,
  type QueueConsumerOptions,
  QueueLayout,
  type QueueStreamOptions,
  queueConsumerConfig,
  queueConsumerName,
  queueStreamOf,
} from '@herald/queue';
import { type ConsumerConfig, headers, type JetStreamManager, type NatsConnection } from 'nats';

/** A fresh UUID v4 (lower case), as accounts and recipients are. */
export const uuid = () => randomUUID();

/** The layout retention runs with by default (QUEUE_PARTITIONS unset). */
export const layout = new QueueLayout();

/** Creates the queue's partition streams as ingress does. */
export async function addQueueStream(
  jsm: JetStreamManager,
  opts: QueueStreamOptions = {},
): Promise<void> {
  await ensureQueueStream(jsm, { ...opts, layout });
}

/** Deletes every partition stream (those that exist). */
export async function deleteQueueStreams(jsm: JetStreamManager): Promise<void> {
  for (const s of layout.streams) await jsm.streams.delete(s).catch(() => undefined);
}

/** Totals over every partition, and each non-empty partition's first sequence. */
export async function queueState(jsm: JetStreamManager) {
  const state = { messages: 0, consumer_count: 0, first_seqs: [] as number[] };
  for (const s of layout.streams) {
    const info = await jsm.streams.info(s);
    state.messages += info.state.messages;
    state.consumer_count += info.state.consumer_count;
    if (info.state.messages > 0) state.first_seqs.push(info.state.first_seq);
  }
  return state;
}

/** A fresh recipient whose queue shares `other`'s partition stream. */
export function uuidBeside(account: string, other: string): string {
  for (;;) {
    const r = uuid();
    if (queueStreamOf(account, r) === queueStreamOf(account, other)) return r;
  }
}

/**
 * Stores an event for a recipient the way ingress does (Herald-Id header, then the rt.queued
 * notice) and returns its id.
 */
export async function dispatch(
  nc: NatsConnection,
  account: string,
  recipient: string,
  body = '{"n":1}',
): Promise<string> {
  const id = randomUUID();
  const h = headers();
  h.set(EventHeaders.id, id);
  h.set(EventHeaders.ts, String(Date.now()));
  await nc
    .jetstream()
    .publish(subjects.queue(account, recipient), new TextEncoder().encode(body), { headers: h });
  const notice: QueuedNotice = { v: 1, id };
  nc.publish(subjects.queued(account, recipient), JSON.stringify(notice));
  return id;
}

export async function dispatchMany(
  nc: NatsConnection,
  account: string,
  recipient: string,
  n: number,
): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < n; i++) ids.push(await dispatch(nc, account, recipient, `{"n":${i}}`));
  return ids;
}

/**
 * Delivers the first `n` queued events of a recipient like one edge connection would, acking the
 * first `ack` of them and leaving the rest delivered but unacked. Creates the consumer as the edge
 * does. Returns the delivered ids in order.
 */
export async function deliver(
  nc: NatsConnection,
  jsm: JetStreamManager,
  account: string,
  recipient: string,
  n: number,
  ack = n,
  consumerOpts: QueueConsumerOptions = {},
): Promise<string[]> {
  const exists = await consumerExists(jsm, account, recipient);
  if (!exists) {
    // Explicit acks, as EdgeSim's: it leaves deliveries unacked below acked ones.
    await jsm.consumers.add(
      queueStreamOf(account, recipient),
      queueConsumerConfig(account, recipient, {
        ackPolicy: 'explicit',
        ...consumerOpts,
      }) as unknown as ConsumerConfig,
    );
  }
  const consumer = await nc
    .jetstream()
    .consumers.get(queueStreamOf(account, recipient), queueConsumerName(account, recipient));
  const ids: string[] = [];
  while (ids.length < n) {
    const batch = await consumer.fetch({ max_messages: n - ids.length, expires: 2000 });
    let got = 0;
    for await (const m of batch) {
      got++;
      ids.push(m.headers?.get(EventHeaders.id) ?? '');
      if (ids.length <= ack) await m.ackAck();
    }
    if (got === 0) throw new Error(`only ${ids.length} of ${n} events could be delivered`);
  }
  return ids;
}

/** Herald-Ids stored for a recipient, in stream order. */
export async function storedIds(
  jsm: JetStreamManager,
  account: string,
  recipient: string,
): Promise<string[]> {
  return (await stored(jsm, account, recipient)).map((e) => e.id);
}

/** The recipient's stored events, in stream order: sequence and Herald-Id. */
export async function stored(
  jsm: JetStreamManager,
  account: string,
  recipient: string,
): Promise<{ seq: number; id: string }[]> {
  const events: { seq: number; id: string }[] = [];
  let seq = 0;
  for (;;) {
    const query = { next_by_subj: subjects.queue(account, recipient), seq } as never;
    const msg = await jsm.streams
      .getMessage(queueStreamOf(account, recipient), query)
      .catch(() => undefined);
    if (!msg) return events;
    events.push({ seq: msg.seq, id: msg.header.get(EventHeaders.id) });
    seq = msg.seq + 1;
  }
}

export async function consumerExists(
  jsm: JetStreamManager,
  account: string,
  recipient: string,
): Promise<boolean> {
  return jsm.consumers
    .info(queueStreamOf(account, recipient), queueConsumerName(account, recipient))
    .then(
      () => true,
      () => false,
    );
}
