import type { Logger } from '@herald/kit';
import type { NatsRequester } from '@herald/nats';
import type { QueueFloors, QueueLayout } from '@herald/queue';
import type { StatusBatcher } from '@herald/status-client';
import type { JetStreamClient, JetStreamManager, NatsConnection } from 'nats';
import type { EdgeMetrics } from '../metrics.js';
import type { EdgeSocket } from '../socket/edge-socket.js';

export interface QueueDrainerOptions {
  /** max_messages of consume(). */
  batch: number;
  /** ack_wait of the recipient's consumer, ms. */
  ackWaitMs: number;
  /** max_ack_pending of a consumer this edge creates. */
  maxAckPending: number;
  /** Whether a consumer this edge creates keeps its state in memory (QUEUE_CONSUMER_MEMORY). */
  memoryState?: boolean;
}

/** What every drainer of the edge shares. */
export interface DrainContext {
  nc: NatsConnection;
  js: JetStreamClient;
  jsm: Promise<JetStreamManager>;
  /** Request/reply without nats.js's Error objects, for the connect-time lookup. */
  requester: NatsRequester;
  /** Which partition stream holds a recipient's queue. */
  layout: QueueLayout;
  options: QueueDrainerOptions;
  metrics: EdgeMetrics;
  logger: Logger;
  /** Recorded ack floors, for consumers whose state is in nats-server's memory (ack-floors.ts). */
  floors?: QueueFloors | undefined;
  /** The edge's one status batcher: each acked event is a `delivered` record. */
  status: Pick<StatusBatcher, 'delivered'>;
  /** Runs a queue check when one of the edge's QUEUE_CHECK_CONCURRENCY slots is free. */
  limitChecks: <T>(check: () => Promise<T>) => Promise<T>;
}

/** The recipient a drainer serves (their session: nothing more is kept per recipient). */
export interface DrainTarget {
  readonly account: string;
  readonly recipient: string;
  /** The recipient's sockets on this edge, read at each message. */
  sockets(): Iterable<EdgeSocket>;
}
