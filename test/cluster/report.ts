import type { WebhookReceiver } from '../deploy/webhook-receiver.js';
import { accepted, type ClusterLoad, type Dispatch } from './load.js';

// Each fault's figures, from the load's records: docs/operations.md, "The cluster under faults".

export interface PhaseWindow {
  name: string;
  start: number;
  end: number;
}

export interface PhaseFigures {
  phase: string;
  seconds: number;
  answered: number;
  delivered: number;
  /** Answered 503 with Retry-After (allowed during a fault: nothing was accepted). */
  refused503: number;
  /** No answer (connection reset, timeout): nothing was accepted either. */
  failed: number;
  /** Any other answer: a defect. */
  unexpected: number;
  /** Extra copies of an event on herald.v1 sockets (the SDK drops them by id). */
  duplicatesV1: number;
  /** Longest stretch with no dispatch answered 200 or 202, ms. */
  longestGapMs: number;
  socketsLost: number;
  /** Longest time from a lost socket to an open one again, ms (0: none lost). */
  worstReconnectMs: number;
}

export function figures(load: ClusterLoad, w: PhaseWindow): PhaseFigures {
  const inPhase = load.dispatches.filter((d) => d.phase === w.name);
  const byId = new Map(load.recipients.map((r) => [r.id, r]));
  const ok = inPhase.filter(accepted);
  const delivered = ok.filter((d) => byId.get(d.to)?.received.has(d.seq));
  let duplicatesV1 = 0;
  for (const d of ok) {
    const r = byId.get(d.to);
    if (r?.v1) duplicatesV1 += Math.max(0, (r.received.get(d.seq) ?? 0) - 1);
  }
  const times = [w.start, ...ok.map((d) => d.at).sort((a, b) => a - b), w.end];
  let longestGapMs = 0;
  for (let i = 1; i < times.length; i++)
    longestGapMs = Math.max(longestGapMs, (times[i] as number) - (times[i - 1] as number));
  const outages = load.recipients.flatMap((r) =>
    r.outages.filter((o) => o.lostAt >= w.start && o.lostAt <= w.end),
  );
  const worstReconnectMs = Math.max(0, ...outages.map((o) => (o.backAt ?? Date.now()) - o.lostAt));
  return {
    phase: w.name,
    seconds: Math.round((w.end - w.start) / 1000),
    answered: ok.length,
    delivered: delivered.length,
    refused503: inPhase.filter((d) => d.status === 503 && d.retryAfter !== undefined).length,
    failed: inPhase.filter((d) => d.status === 0).length,
    unexpected: inPhase.filter(
      (d) => d.status !== 0 && !accepted(d) && !(d.status === 503 && d.retryAfter !== undefined),
    ).length,
    duplicatesV1,
    longestGapMs,
    socketsLost: outages.length,
    worstReconnectMs,
  };
}

/** A markdown table of the figures, as docs/operations.md shows them. */
export function table(rows: PhaseFigures[]): string {
  const head =
    '| phase | s | answered 200/202 | delivered | 503 + Retry-After | no answer | other | duplicates (herald.v1) | longest gap without a 200/202 | sockets lost | worst time to a working socket |';
  const sep = `|${' --- |'.repeat(11)}`;
  const lines = rows.map(
    (f) =>
      `| ${f.phase} | ${f.seconds} | ${f.answered} | ${f.delivered} | ${f.refused503} | ${f.failed} | ${f.unexpected} | ${f.duplicatesV1} | ${(f.longestGapMs / 1000).toFixed(1)} s | ${f.socketsLost} | ${(f.worstReconnectMs / 1000).toFixed(1)} s |`,
  );
  return [head, sep, ...lines].join('\n');
}

/** Per phase, each distinct refusal or failure (status and message) and how often it came. */
export function failures(load: ClusterLoad, windows: PhaseWindow[]): string {
  return windows
    .map((w) => {
      const counts = new Map<string, number>();
      for (const d of load.dispatches)
        if (d.phase === w.name && !accepted(d)) {
          const what = `${d.status || 'no answer'}${d.retryAfter ? ` (Retry-After ${d.retryAfter})` : ''}: ${(d.error ?? '').slice(0, 120)}`;
          counts.set(what, (counts.get(what) ?? 0) + 1);
        }
      const lines = [...counts.entries()]
        .sort((a, b) => b[1] - a[1])
        .map(([k, n]) => `  ${n} × ${k}`);
      return lines.length > 0 ? `${w.name}:\n${lines.join('\n')}` : `${w.name}: none`;
    })
    .join('\n');
}

/** The webhook that tells a backend an accepted event reached a socket: a queued one's (202) and a live one's (200: its `sent` is also its delivery, docs/architecture.md) alike. */
export const deliveredHook = (d: Dispatch): string => `${d.id}:event.delivered`;

export interface WebhookFigures {
  /** Events answered 200 or 202, and how many of their event.delivered webhooks arrived. */
  accepted: number;
  arrived: number;
  /** Of those, the ones answered 200 (live) and how many of theirs arrived. */
  live: number;
  liveArrived: number;
  /** Requests beyond the first for a message: retries and duplicates the receiver dropped. */
  repeats: number;
  /** Requests that failed standardwebhooks verification. */
  invalid: number;
  /** From the transition (data.ts) to the first arrival, ms, over the event.delivered webhooks. */
  lagP50Ms: number;
  lagP99Ms: number;
  lagMaxMs: number;
}

/** What the test's receiver got for the load's accepted events. */
export function webhookFigures(load: ClusterLoad, receiver: WebhookReceiver): WebhookFigures {
  const owed = load.dispatches.filter(accepted);
  const lags: number[] = [];
  const f = { accepted: owed.length, arrived: 0, live: 0, liveArrived: 0 };
  for (const d of owed) {
    const m = receiver.messages.get(deliveredHook(d));
    if (m) {
      lags.push(m.at - m.data.ts);
      f.arrived++;
    }
    if (d.status === 200) {
      f.live++;
      if (m) f.liveArrived++;
    }
  }
  lags.sort((a, b) => a - b);
  const at = (q: number) => lags[Math.min(lags.length - 1, Math.floor(q * lags.length))] ?? 0;
  return {
    ...f,
    repeats: receiver.repeats(),
    invalid: receiver.invalid.length,
    lagP50Ms: at(0.5),
    lagP99Ms: at(0.99),
    lagMaxMs: lags.at(-1) ?? 0,
  };
}
