import { performance } from 'node:perf_hooks';
import { SUBPROTOCOL, subjects } from '@herald/proto';
import type { Consumer } from 'nats';
import { centrifugoFleet } from '../load/centrifugo-fleet.js';
import { waitUntil } from '../load/pace.js';
import { WsFleet } from '../load/ws-fleet.js';
import { seqOf, seqOfValue } from '../payload.js';
import { type BenchContext, type CentrifugoPeer, HANDSHAKE_TIMEOUT_MS } from './context.js';
import { DrainCount } from './drain-count.js';
import { ackFrame, connectUrl, rawWsUrl, sdkConnectUrl } from './herald-wire.js';
import { queueLayout } from './queue-prep.js';

/* Figure 4 (b)'s reconnect storms: Herald's, the design floor's and Centrifugo's, and the replay baseline. */

export interface DrainOutcome {
  /** Per recipient: ms from the start until its last expected event (the time bound if it never came). */
  times: number[];
  /** Per recipient: ms from the start until its socket opened. */
  openTimes?: number[];
  /** Per opened socket: ms from its open until its last expected event, or until the time bound. */
  afterOpenTimes?: number[];
  delivered: number;
  /** Arrivals of an event (by id) that had already arrived. */
  duplicates: number;
  /** First arrivals numbered below one that came before them to the same recipient. */
  outOfOrder: number;
  failedConnects: number;
  firstError?: string;
}

/** How (b)'s sockets are opened, Herald's and the connect-only baseline's alike. */
export function stormSettings(ctx: BenchContext, sockets: number) {
  return {
    tls: ctx.tls,
    addresses: ctx.addresses,
    concurrency: Math.min(sockets, ctx.config.drainConnectConcurrency),
    handshakeTimeoutMs: HANDSHAKE_TIMEOUT_MS,
  };
}

/** What a storm's fleet reports: socket i opened, socket i received the event with this id. */
export interface StormHandlers {
  onOpen: (i: number) => void;
  onEvent: (i: number, id: string, seq: number) => void;
}

/**
 * Which client Herald's sockets are: without `device`, herald.v1 `batch=1` with no device (the
 * recipient's durable consumer feeds it); with one, the SDK's default client, fed from that
 * device's position. `apiKey`: another tenant's key (an inbox key's).
 */
export interface HeraldClient {
  device?: string;
  apiKey?: string;
}

/**
 * Opens one herald.v1 socket per recipient, all at once, with `batch=1`, acking every event as the
 * SDK does (an `events` frame with one list ack); with `client.device`, as the SDK's default client.
 */
export function reconnect(
  ctx: BenchContext,
  recipients: string[],
  each: number,
  client: HeraldClient = {},
): Promise<DrainOutcome> {
  const { device, apiKey } = client;
  return storm(
    ctx,
    recipients,
    each,
    (on) =>
      new WsFleet({
        url: (i) =>
          device === undefined
            ? connectUrl(ctx.stack, recipients[i] as string, true)
            : sdkConnectUrl(ctx.stack, recipients[i] as string, device, apiKey),
        protocols: [SUBPROTOCOL],
        ...stormSettings(ctx, recipients.length),
        onOpen: on.onOpen,
        onMessage: (i, data, ws) => {
          for (const e of ackFrame(data, (ack) => ws.send(ack))) on.onEvent(i, e.id, e.seq);
        },
      }),
  );
}

/** Where Herald stores a recipient's events: the design floor's storm drains the same. */
export function heraldQueue(ctx: BenchContext) {
  return {
    stream: (r: string) => queueLayout.streamOf(ctx.stack.account, r),
    subject: (r: string) => subjects.queue(ctx.stack.account, r),
  };
}

/**
 * The same storm against the design floor: one raw ws socket per recipient, whose server drains
 * the recipient's stored events from a durable consumer of its own (raw-ws-server.ts, drainQueue)
 * on the given stream and subject. The frames are the bare payloads; an event is told apart by
 * its sequence number.
 */
export function floorReconnect(
  ctx: BenchContext,
  recipients: string[],
  each: number,
  source: { stream: (r: string) => string; subject: (r: string) => string },
): Promise<DrainOutcome> {
  return storm(
    ctx,
    recipients,
    each,
    (on) =>
      new WsFleet({
        url: (i) => {
          const r = recipients[i] as string;
          const q = new URLSearchParams({ stream: source.stream(r), subject: source.subject(r) });
          return `${rawWsUrl(ctx.baselines.rawWsOrigin, r)}&${q}`;
        },
        ...stormSettings(ctx, recipients.length),
        onOpen: on.onOpen,
        onMessage: (i, data) => {
          const seq = seqOf(data.toString('utf8'));
          if (seq >= 0) on.onEvent(i, String(seq), seq);
        },
      }),
  );
}

/**
 * The same storm against Centrifugo: one socket per recipient connecting with
 * `recover: true, offset: 0, epoch: ""`, so the server replays the personal channel's history
 * (in the connect reply itself); an event is told apart by its sequence number.
 */
export function centrifugoReconnect(
  ctx: BenchContext,
  peer: CentrifugoPeer,
  recipients: string[],
  each: number,
): Promise<DrainOutcome> {
  return storm(ctx, recipients, each, (on) =>
    centrifugoFleet({
      server: peer.server,
      recipient: (i) => recipients[i] as string,
      recover: true,
      ...stormSettings(ctx, recipients.length),
      onOpen: on.onOpen,
      onPublication: (i, data) => {
        const seq = seqOfValue(data);
        on.onEvent(i, String(seq), seq);
      },
    }),
  );
}

/**
 * Opens one socket per recipient, all at once, and times each recipient until `each` distinct
 * events (by the id its fleet reports) have arrived; every arrival is counted, a second one of an
 * id as a duplicate, a first one numbered below an earlier arrival as out of order.
 */
export async function storm(
  ctx: BenchContext,
  recipients: string[],
  each: number,
  makeFleet: (on: StormHandlers) => WsFleet,
): Promise<DrainOutcome> {
  const count = new DrainCount(
    recipients.length,
    each,
    () => performance.now() - start <= ctx.config.drainTimeoutMs,
  );
  const { drains } = count;
  const fleet = makeFleet({ onOpen: count.open, onEvent: count.event });
  const start = performance.now();
  try {
    const out = await fleet.grow(recipients.length);
    await waitUntil(
      () => count.complete === recipients.length,
      ctx.config.drainTimeoutMs - (performance.now() - start),
      5,
    );
    return {
      // A recipient that never caught up counts as the whole time bound (a censored sample).
      times: drains.map((d) => Math.min(d.doneAt - start, ctx.config.drainTimeoutMs)),
      // The same, split at the socket's open: the handshake, then the drain itself.
      openTimes: drains.map((d) => Math.min(d.openAt - start, ctx.config.drainTimeoutMs)),
      afterOpenTimes: drains
        .filter((d) => d.openAt - start < ctx.config.drainTimeoutMs)
        .map((d) => Math.min(d.doneAt, start + ctx.config.drainTimeoutMs) - d.openAt),
      delivered: count.delivered,
      duplicates: count.duplicates,
      outOfOrder: count.outOfOrder,
      failedConnects: out.failed,
      ...(out.firstError === undefined ? {} : { firstError: out.firstError }),
    };
  } finally {
    await fleet.close();
  }
}

/**
 * (b)'s connects without Herald: one TLS WebSocket per recipient to the raw ws baseline, all at
 * once, through the same fleet settings. Per socket, ms from the start until it opened (the time
 * bound if it never did): what the load generator and TLS alone cost the storm on this machine.
 */
export async function connectStorm(ctx: BenchContext, recipients: string[]): Promise<number[]> {
  const bound = ctx.config.drainTimeoutMs;
  const openAt = recipients.map(() => Number.POSITIVE_INFINITY);
  const fleet = new WsFleet({
    url: (i) => rawWsUrl(ctx.baselines.rawWsOrigin, recipients[i] as string),
    ...stormSettings(ctx, recipients.length),
    onOpen: (i) => {
      openAt[i] = performance.now();
    },
  });
  const start = performance.now();
  try {
    await fleet.grow(recipients.length);
    return openAt.map((t) => Math.min(t - start, bound));
  } finally {
    await fleet.close();
  }
}

/** Replays each recipient's stored messages with its own ordered consumer, all at once. */
export async function replay(
  ctx: BenchContext,
  recipients: string[],
  each: number,
): Promise<DrainOutcome> {
  const start = performance.now();
  let delivered = 0;
  let duplicates = 0;
  let outOfOrder = 0;
  const times = await Promise.all(
    recipients.map(async (r) => {
      let consumer: Consumer | undefined;
      try {
        consumer = await ctx.js.consumers.get(queueLayout.streamOf(ctx.stack.account, r), {
          filterSubjects: subjects.queue(ctx.stack.account, r),
        });
        const messages = await consumer.consume({ max_messages: Math.min(each, 1000) });
        let got = 0;
        let maxSeq = -1;
        const seen = new Set<number>();
        const timer = setTimeout(() => messages.stop(), ctx.config.drainTimeoutMs);
        for await (const m of messages) {
          const seq = seqOf(m.string());
          if (seen.has(seq)) {
            duplicates++;
            continue;
          }
          seen.add(seq);
          if (seq < maxSeq) outOfOrder++;
          else maxSeq = seq;
          delivered++;
          if (++got === each) break;
        }
        clearTimeout(timer);
        return got === each ? performance.now() - start : ctx.config.drainTimeoutMs;
      } finally {
        await consumer?.delete().catch(() => false);
      }
    }),
  );
  return { times, delivered, duplicates, outOfOrder, failedConnects: 0 };
}
