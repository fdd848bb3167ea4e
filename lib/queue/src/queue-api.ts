import {
  isConsumerNotFound,
  isDeleteNotFound,
  isNoMessageFound,
  isStreamNotFound,
} from '@herald/nats';
import { EventHeaders } from '@herald/proto';
import type { ConsumerInfo, JetStreamManager, MsgRequest, NatsConnection, StreamInfo } from 'nats';

/** What paces the calls: retention's token bucket. */
export interface QueueApiLimiter {
  take(): Promise<void>;
}

/** A page of `CONSUMER.LIST`: the server's own page size (256 on 2.9/2.10), sorted by name. */
export interface ConsumerPage {
  total: number;
  consumers: ConsumerInfo[];
}

/** The first stored event of a subject at or after a sequence. */
export interface FirstEvent {
  seq: number;
  id: string | undefined;
}

interface ListResponse {
  total?: number;
  consumers?: ConsumerInfo[];
  error?: { code: number; err_code?: number; description?: string };
}

/**
 * The JetStream calls retention makes on one partition stream of the queue, each taking a token from the run's
 * {@link QueueApiLimiter} first. Absent things (a consumer another actor deleted, an empty subject)
 * come back as undefined, not as errors.
 */
export class QueueApi {
  readonly #nc: NatsConnection;
  readonly #jsm: JetStreamManager;
  readonly #limiter: QueueApiLimiter;
  readonly #timeoutMs: number;
  readonly #apiPrefix: string;
  /** The partition stream these calls go to. */
  readonly stream: string;
  /** JetStream API calls made, for the run summary. */
  calls = 0;

  constructor(
    nc: NatsConnection,
    jsm: JetStreamManager,
    limiter: QueueApiLimiter,
    opts: { stream: string; timeoutMs: number; apiPrefix?: string },
  ) {
    this.stream = opts.stream;
    this.#nc = nc;
    this.#jsm = jsm;
    this.#limiter = limiter;
    this.#timeoutMs = opts.timeoutMs;
    this.#apiPrefix = opts.apiPrefix ?? '$JS.API';
  }

  /**
   * One page of consumer infos from `offset`. The offset is the caller's to manage: nats.js's
   * lister advances by what it received, which skips consumers when the caller deletes some of
   * the page it is walking.
   */
  async listConsumers(offset: number): Promise<ConsumerPage> {
    await this.#take();
    const reply = await this.#nc.request(
      `${this.#apiPrefix}.CONSUMER.LIST.${this.stream}`,
      JSON.stringify({ offset }),
      { timeout: this.#timeoutMs },
    );
    const body = JSON.parse(new TextDecoder().decode(reply.data)) as ListResponse;
    if (body.error) {
      throw Object.assign(
        new Error(`CONSUMER.LIST failed: ${body.error.description ?? body.error.code}`),
        {
          api_error: body.error,
        },
      );
    }
    return { total: body.total ?? 0, consumers: body.consumers ?? [] };
  }

  async consumerInfo(name: string): Promise<ConsumerInfo | undefined> {
    await this.#take();
    try {
      return await this.#jsm.consumers.info(this.stream, name);
    } catch (err) {
      if (isConsumerNotFound(err)) return undefined;
      throw err;
    }
  }

  /** The subject's first stored event at or after `fromSeq` (a direct lookup; no consumer involved). */
  async firstEvent(subject: string, fromSeq = 0): Promise<FirstEvent | undefined> {
    await this.#take();
    try {
      // nats.js types STREAM.MSG.GET without next_by_subj, which servers >= 2.9 accept.
      const query = { next_by_subj: subject, seq: fromSeq } as unknown as MsgRequest;
      const msg = await this.#jsm.streams.getMessage(this.stream, query);
      return { seq: msg.seq, id: msg.header?.get(EventHeaders.id) || undefined };
    } catch (err) {
      if (isNoMessageFound(err)) return undefined;
      throw err;
    }
  }

  /**
   * Deletes one stored event by stream sequence (without overwriting it on disk, as a purge does
   * not either). False when it was already gone. Unlike a purge, a delete never goes through the
   * server's consumer purge path, and holds the stream's lock for one message, not for a scan.
   */
  async deleteEvent(seq: number): Promise<boolean> {
    await this.#take();
    try {
      return await this.#jsm.streams.deleteMessage(this.stream, seq, false);
    } catch (err) {
      if (isDeleteNotFound(err)) return false;
      throw err;
    }
  }

  /** False when the consumer was already gone. */
  async deleteConsumer(name: string): Promise<boolean> {
    await this.#take();
    try {
      return await this.#jsm.consumers.delete(this.stream, name);
    } catch (err) {
      if (isConsumerNotFound(err)) return false;
      throw err;
    }
  }

  /** The stream's info, with per-subject counts when asked; undefined when the stream does not exist. */
  async streamInfo(withSubjects = false): Promise<StreamInfo | undefined> {
    await this.#take();
    try {
      return await this.#jsm.streams.info(
        this.stream,
        withSubjects ? { subjects_filter: '>' } : undefined,
      );
    } catch (err) {
      if (isStreamNotFound(err)) return undefined;
      throw err;
    }
  }

  async #take(): Promise<void> {
    await this.#limiter.take();
    this.calls++;
  }
}
