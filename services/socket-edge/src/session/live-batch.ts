import type { Logger } from '@herald/kit';
import {
  accountOfLastToken,
  decodeLiveBatch,
  type LiveBatchReply,
  LiveHoldersQuery,
  type LiveHoldersReply,
  subjects,
} from '@herald/proto';
import { JSONCodec, type Msg, type NatsConnection, type Subscription } from 'nats';
import type { RecipientRegistry } from './connection-registry.js';
import type { LiveDelivery } from './live-delivery.js';

const json = JSONCodec();

export interface LiveBatchServerDeps {
  nc: NatsConnection;
  /** This edge's id: where ingress sends it the events of the recipients it holds. */
  edgeId: string;
  sessions: Pick<RecipientRegistry, 'get'>;
  /** Edges alive as far as this edge knows, itself included (1 when it cannot know). */
  edgesAlive: () => number;
  logger: Logger;
}

/**
 * The edge's side of a batch's live push (proto/live-batch.ts): answers every batch's "which of
 * these recipients do you hold?", and writes the events ingress then sends this edge, answering
 * per event how many sockets took it once a socket proved receipt (0: not sent, ingress queues it).
 * The account comes from the subject, as for a live request, so a batch of account A only ever
 * reaches sessions of account A.
 */
export function serveLiveBatches(deps: LiveBatchServerDeps): { stop(): void } {
  const { nc, edgeId, sessions, logger } = deps;
  const subs: Subscription[] = [
    nc.subscribe(subjects.liveHoldersAll, {
      callback: (err, msg) => {
        if (!err) answerHolders(msg);
      },
    }),
    nc.subscribe(subjects.edgeLiveAll(edgeId), {
      callback: (err, msg) => {
        if (!err) writeBatch(msg);
      },
    }),
  ];

  function answerHolders(msg: Msg): void {
    const account = accountOfLastToken(msg.subject);
    let body: unknown;
    try {
      body = json.decode(msg.data);
    } catch {
      body = undefined;
    }
    const query = LiveHoldersQuery.safeParse(body);
    if (!account || !query.success || !msg.reply) {
      logger.warn({ subject: msg.subject }, 'ignoring a malformed live-holders query');
      return;
    }
    const held: number[] = [];
    query.data.recipients.forEach((recipient, index) => {
      if (sessions.get(account, recipient)?.holding) held.push(index);
    });
    const reply: LiveHoldersReply = { v: 1, edge: edgeId, edges: deps.edgesAlive(), held };
    msg.respond(json.encode(reply));
  }

  function writeBatch(msg: Msg): void {
    const account = accountOfLastToken(msg.subject);
    let batch: ReturnType<typeof decodeLiveBatch>;
    try {
      if (!account) throw new TypeError('no account in the subject');
      batch = decodeLiveBatch(msg.data);
    } catch (err) {
      logger.warn({ subject: msg.subject, err: String(err) }, 'ignoring a malformed live batch');
      return;
    }
    const { meta, payloads } = batch;
    const sockets: number[] = new Array(meta.events.length).fill(0);
    const open: (LiveDelivery | undefined)[] = [];
    let waiting = meta.events.length;
    let answered = false;
    const answer = () => {
      if (answered) return;
      answered = true;
      clearTimeout(deadline);
      // What is still unanswered counts as not sent: ingress queues it, and a proof coming
      // later does not answer it (the queued copy has the same id).
      for (const live of open) live?.abandon();
      if (msg.reply) msg.respond(json.encode({ v: 1, sockets } satisfies LiveBatchReply));
    };
    const deadline = setTimeout(answer, meta.reply_within_ms);
    meta.events.forEach((event, index) => {
      const session = sessions.get(account, event.recipient);
      if (!session?.holding) {
        waiting--;
        return;
      }
      const data = payloads[index] as Uint8Array;
      const edgeEvent =
        event.topic === undefined
          ? { id: event.id, ts: event.ts, data }
          : { id: event.id, ts: event.ts, data, topic: event.topic };
      let settled = false;
      const settle = (count: number) => {
        if (settled || answered) return;
        settled = true;
        // Not sent: ingress queues it, so a proof coming later must not answer it.
        if (count === 0) open[index]?.abandon();
        open[index] = undefined;
        sockets[index] = count;
        if (--waiting === 0) answer();
      };
      const live = session.pushLive(edgeEvent, { sent: settle, unsent: () => settle(0) });
      if (!settled) open[index] = live;
    });
    if (waiting === 0) answer();
  }

  return {
    stop() {
      for (const sub of subs) sub.unsubscribe();
    },
  };
}
