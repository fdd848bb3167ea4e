import type { HeraldStack } from '../env/herald-stack.js';
import { WsFleet } from '../load/ws-fleet.js';
import { seqOfFrame } from '../payload.js';
import { type BenchContext, HANDSHAKE_TIMEOUT_MS } from './context.js';
import { PROCESSES } from './cpu-meter.js';
import { DeliveryTracker } from './delivery-tracker.js';
import { connectUrl } from './herald-wire.js';
import { targetOps } from './online-ops.js';
import type { Target } from './online-targets.js';

/** One side of an on/off publish-cost pair: its sockets and its closed `POST /notify` load. */
export interface PublishSide {
  subject: string;
  target: Target;
  fleet: WsFleet;
}

/**
 * A side of figures 7's and 8's same-run A/B: one socket per recipient on `stack`, each frame's
 * sequence counted, and a closed load of `POST /notify` to those recipients through ingress.
 */
export function publishSide(
  context: BenchContext,
  subject: string,
  stack: HeraldStack,
  recipients: string[],
): PublishSide {
  const ctx = { ...context, stack };
  const tracker = new DeliveryTracker();
  const fleet = new WsFleet({
    tls: ctx.tls,
    addresses: ctx.addresses,
    concurrency: ctx.config.connectConcurrency,
    handshakeTimeoutMs: HANDSHAKE_TIMEOUT_MS,
    url: (i) => connectUrl(stack, recipients[i] as string),
    onMessage: (_i, data) => tracker.hit(seqOfFrame(data)),
  });
  const { closed, notifyOver } = targetOps(ctx, recipients);
  const target: Target = {
    subject,
    role: 'herald',
    job: 'other',
    processes: PROCESSES.herald,
    tracker,
    http: ctx.http.ingress,
    load: closed(notifyOver(ctx.http.ingress), 1),
  };
  return { subject, target, fleet };
}

/** CPU seconds each process used between two snapshots. */
export function cpuUsed(
  before: Map<string, number>,
  after: Map<string, number>,
): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [name, s] of after) out[name] = s - (before.get(name) ?? s);
  return out;
}
