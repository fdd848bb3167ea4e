import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { SUBPROTOCOL } from '@herald/proto';
import { waitUntil } from '../load/pace.js';
import { WsFleet } from '../load/ws-fleet.js';
import { type BenchContext, HANDSHAKE_TIMEOUT_MS } from './context.js';
import { meterCpu, PROCESSES } from './cpu-meter.js';
import { ackFrame, connectUrl } from './herald-wire.js';
import { queueLayout } from './queue-prep.js';
import { CopyCounter, type CopyTally, tallyCopies } from './topic-copies.js';

/** Recipients per `PUT /topics/{topic}/members` (the route's own bound). */
const MEMBERS_PER_PUT = 10_000;
/** How often the offline row reads the queue streams' message counts, ms. */
const POLL_MS = 50;
/** How often the wait for a fan-out's status records asks `/events/status`, ms. */
const STATUS_POLL_MS = 200;

/** One fan-out measured: members/s from the POST to the last copy, Herald's CPU, the copies. */
export interface FanoutRun {
  members: number;
  elapsedMs: number;
  cpuSeconds: number;
  perProcess: Record<string, number>;
  tally: CopyTally;
  /** The topic event's id. */
  id: string;
}

/** A topic of the stack's account with `members` fresh recipients, made by the membership route. */
export async function makeTopic(ctx: BenchContext, name: string, members: string[]): Promise<void> {
  for (let at = 0; at < members.length; at += MEMBERS_PER_PUT) {
    const recipients = members.slice(at, at + MEMBERS_PER_PUT);
    const r = await ctx.http.ingress.send(
      'PUT',
      `/topics/${name}/members`,
      JSON.stringify({ api_key: ctx.stack.apiKey, recipients }),
    );
    if (r.status !== 200) throw new Error(`PUT members: HTTP ${r.status}: ${r.text.slice(0, 200)}`);
  }
}

/** Sends one event to `topic`: throws unless it was accepted for every member; its event id. */
export async function sendToTopic(
  ctx: BenchContext,
  topic: string,
  members: number,
  seq: number,
): Promise<string> {
  const body = `{"topic":"${topic}","payload":${ctx.payload.make(seq)},"api_key":"${ctx.stack.apiKey}","client":"mobile"}`;
  const r = await ctx.http.ingress.post('/notify', body);
  if (r.status !== 202) throw new Error(`topic notify: HTTP ${r.status}: ${r.text.slice(0, 200)}`);
  const got = JSON.parse(r.text) as { id: string; members?: number };
  if (got.members !== members)
    throw new Error(`topic notify: ${got.members} members accepted, ${members} expected`);
  return got.id;
}

/**
 * Waits (within BENCH_TOPIC_SETTLE_MS) until every copy of topic event `id` has its status record
 * (`/events/status`' counts add up to the members), so the status service's tail of one fan-out
 * does not fall into the next measurement. Whether it did.
 */
export async function statusSettled(
  ctx: BenchContext,
  id: string,
  members: number,
): Promise<boolean> {
  const body = JSON.stringify({ api_key: ctx.stack.apiKey, ids: [id] });
  const end = performance.now() + ctx.config.topicSettleMs;
  while (performance.now() < end) {
    const r = await ctx.http.ingress.post('/events/status', body);
    if (r.status === 200) {
      const { events } = JSON.parse(r.text) as {
        events: Array<{ topic?: Partial<Record<string, number>> }>;
      };
      const t = events[0]?.topic ?? {};
      const counted = (t.sent ?? 0) + (t.pending ?? 0) + (t.delivered ?? 0) + (t.failed ?? 0);
      if (counted >= members) return true;
    }
    await new Promise((resolve) => setTimeout(resolve, STATUS_POLL_MS));
  }
  return false;
}

/** Messages in every queue partition stream: what a fan-out to offline members adds to. */
export async function storedMessages(ctx: BenchContext): Promise<number> {
  let total = 0;
  for (const stream of queueLayout.streams) {
    total += (await ctx.jsm.streams.info(stream)).state.messages;
  }
  return total;
}

/**
 * One event to the offline topic: from the POST until the queue streams hold one more message per
 * member (or the settle bound), Herald's CPU metered over the same span. `extraStored()`: messages
 * others stored meanwhile (direct events answered 202), left out of the copies' count. `pollMs`:
 * how often the partition streams are read (one request per stream).
 */
export async function offlineFanout(
  ctx: BenchContext,
  topic: string,
  members: number,
  seq: number,
  extraStored: () => number = () => 0,
  pollMs = POLL_MS,
): Promise<FanoutRun> {
  const before = await storedMessages(ctx);
  let stored = 0;
  let lastAt = 0;
  let id = '';
  const t0 = performance.now();
  const { cpuSeconds, perProcess } = await meterCpu(ctx.servers, PROCESSES.herald, async () => {
    id = await sendToTopic(ctx, topic, members, seq);
    const end = t0 + ctx.config.topicSettleMs;
    while (performance.now() < end) {
      const now = (await storedMessages(ctx)) - before - extraStored();
      if (now > stored) {
        stored = now;
        lastAt = performance.now();
      }
      if (stored >= members) return;
      await new Promise((r) => setTimeout(r, pollMs));
    }
  });
  return {
    members,
    elapsedMs: (lastAt || performance.now()) - t0,
    cpuSeconds,
    perProcess,
    tally: tallyCopies(members, stored),
    id,
  };
}

/** The connected topic's members, one herald.v1 socket each, every copy acked and counted by id. */
export class ConnectedMembers {
  readonly members: string[];
  readonly counter = new CopyCounter();
  readonly fleet: WsFleet;

  constructor(ctx: BenchContext, count: number) {
    this.members = Array.from({ length: count }, () => randomUUID());
    this.fleet = new WsFleet({
      url: (i) => connectUrl(ctx.stack, this.members[i] as string),
      protocols: [SUBPROTOCOL],
      tls: ctx.tls,
      addresses: ctx.addresses,
      concurrency: ctx.config.connectConcurrency,
      handshakeTimeoutMs: HANDSHAKE_TIMEOUT_MS,
      onMessage: (_i, data, ws) => {
        for (const e of ackFrame(data, (ack) => ws.send(ack))) this.counter.hit(e.id);
      },
    });
  }

  /** Opens every socket; throws unless all opened. */
  async open(): Promise<void> {
    const o = await this.fleet.grow(this.members.length);
    if (o.opened !== this.members.length)
      throw new Error(`${o.failed} member sockets failed to open: ${o.firstError}`);
  }

  /** One event to the topic, from the POST until every member's socket had its copy. */
  async fanout(ctx: BenchContext, topic: string, seq: number): Promise<FanoutRun> {
    const members = this.members.length;
    this.counter.reset();
    let id = '';
    const t0 = performance.now();
    const { cpuSeconds, perProcess } = await meterCpu(ctx.servers, PROCESSES.herald, async () => {
      id = await sendToTopic(ctx, topic, members, seq);
      await waitUntil(() => this.counter.distinct >= members, ctx.config.topicSettleMs, 5);
    });
    return {
      members,
      elapsedMs: (this.counter.lastAt || performance.now()) - t0,
      cpuSeconds,
      perProcess,
      tally: tallyCopies(members, this.counter.distinct, this.counter.duplicates),
      id,
    };
  }
}
