import type { PushService } from '@herald/testkit';
import { post } from '@herald/testkit';
import type { ComposeStack } from '@herald/testkit/compose';
import { expect } from 'vitest';
import { pushesTo, startPushService } from '../deploy/push-service.js';
import { metricsText } from './cluster-ops.js';
import { accepted, type ClusterLoad, type Dispatch, type LoadTarget } from './load.js';
import { describeMissing } from './webhooks.js';

// The cluster test's push check (issue 40): the demo account's VAPID key and a Live key with
// --push-after-ms, made with the admin CLI; the load's push recipients (load.ts, offlinePush) are
// offline the whole time the faults run, each with SUBSCRIPTIONS Web Push subscriptions at the
// test kit's push service on the Docker host (../deploy/push-service.ts). No socket can prove
// their events before the window ends, so every accepted one is owed to each subscription: in
// exactly one push's `ids`. A backlog too large for one push (3,993 bytes of plaintext) drops its
// oldest ids and keeps their `count`, so an id missing from every push is excused only by a
// trimmed push's count, and the counts may not add up to more than the events that could have
// been accepted (a second push of a trimmed-out event would).

/** The key's window: far shorter than the minutes the push recipients stay offline. */
export const PUSH_AFTER_MS = 2_000;
/** Web Push subscriptions per push recipient (two: "once per subscription", not per recipient). */
const SUBSCRIPTIONS = 2;

export interface PushSetup {
  service: PushService;
  key: string;
  /** Each push recipient's subscription endpoints. */
  endpoints: Map<string, string[]>;
}

/** The account's VAPID key, a Live key that pushes, and the push service on the host. */
export async function setUpPush(stack: ComposeStack): Promise<PushSetup> {
  const account = stack.demo().accountId;
  await stack.admin('push', 'configure', '--account', account, '--vapid', 'generate');
  const key = await stack.admin<{ key: string }>(
    'key',
    'create',
    '--account',
    account,
    '--kind',
    'live',
    '--client',
    'mobile',
    '--push-after-ms',
    String(PUSH_AFTER_MS),
  );
  return { service: await startPushService(stack.project), key: key.key, endpoints: new Map() };
}

/** Registers every push recipient's subscriptions through the load balancer (before any event). */
export async function subscribe(setup: PushSetup, target: LoadTarget, load: ClusterLoad) {
  for (const r of load.recipients.filter((r) => r.apiKey === setup.key)) {
    const endpoints: string[] = [];
    for (let i = 0; i < SUBSCRIPTIONS; i++) {
      const subscription = setup.service.subscribe();
      const res = await post(
        target.baseUrl,
        target.ca,
        { api_key: setup.key, recipient: r.id, client: 'mobile', kind: 'webpush', subscription },
        { path: '/push/subscriptions' },
      );
      if (res.status !== 201)
        throw new Error(`POST /push/subscriptions: ${res.status} ${res.text}`);
      endpoints.push(subscription.endpoint);
    }
    setup.endpoints.set(r.id, endpoints);
  }
}

export interface PushFindings {
  /** Accepted events owed a push, times the subscriptions of their recipient. */
  owed: number;
  pushes: number;
  /** Owed events in no push's ids of a subscription, beyond what trimmed pushes' counts excuse. */
  missing: Array<{ d: Dispatch; endpoint: string }>;
  /** Owed events in the ids of more than one push of a subscription. */
  twice: Array<{ d: Dispatch; endpoint: string; times: number }>;
  /** Subscriptions whose pushes' counts add up to more than the events that could have been accepted. */
  overCounted: string[];
  /** Pushes that did not decrypt or whose VAPID header did not verify. */
  invalid: string[];
  /** The most events one push stood for. */
  largest: number;
}

export function pushFindings(load: ClusterLoad, setup: PushSetup): PushFindings {
  const f: PushFindings = {
    owed: 0,
    pushes: 0,
    missing: [],
    twice: [],
    overCounted: [],
    invalid: [],
    largest: 0,
  };
  for (const a of setup.service.arrivals()) if (a.error) f.invalid.push(`${a.id}: ${a.error}`);
  for (const [recipient, endpoints] of setup.endpoints) {
    const sent = load.dispatches.filter((d) => d.to === recipient);
    const owed = sent.filter(accepted);
    // No answer (0) may still have been accepted; a 503 was not.
    const maybe = sent.filter((d) => d.status === 0).length;
    for (const endpoint of endpoints) {
      const pushes = pushesTo(setup.service, endpoint);
      f.pushes += pushes.length;
      f.owed += owed.length;
      const times = new Map<string, number>();
      let counted = 0;
      let trimmed = 0;
      for (const p of pushes) {
        for (const id of p.ids) times.set(id, (times.get(id) ?? 0) + 1);
        counted += p.count;
        trimmed += p.count - p.ids.length;
        f.largest = Math.max(f.largest, p.count);
      }
      const missing = owed.filter((d) => d.id === undefined || !times.has(d.id));
      if (missing.length > trimmed) for (const d of missing) f.missing.push({ d, endpoint });
      for (const d of owed) {
        const n = d.id === undefined ? 0 : (times.get(d.id) ?? 0);
        if (n > 1) f.twice.push({ d, endpoint, times: n });
      }
      if (counted > owed.length + maybe)
        f.overCounted.push(
          `${endpoint}: ${counted} counted for ${owed.length} accepted + ${maybe} unanswered`,
        );
    }
  }
  return f;
}

const settled = (f: PushFindings) => f.missing.length === 0 && f.twice.length === 0;

/** Waits, polling, until every owed push arrived or `limitMs` passed; the ms waited. */
export async function waitForPushes(
  load: ClusterLoad,
  setup: PushSetup,
  limitMs: number,
): Promise<number> {
  const started = Date.now();
  while (!settled(pushFindings(load, setup)) && Date.now() - started < limitMs)
    await new Promise<void>((r) => setTimeout(r, 500));
  return Date.now() - started;
}

/** The first missing and duplicated events, each with its POST /events/status (push key). */
export async function describePushes(
  target: LoadTarget,
  setup: PushSetup,
  f: PushFindings,
): Promise<string[]> {
  const all = [
    ...f.missing.map((m) => ({ d: m.d, what: `not pushed to ${m.endpoint}` })),
    ...f.twice.map((t) => ({ d: t.d, what: `pushed ${t.times} times to ${t.endpoint}` })),
  ];
  if (all.length === 0) return [];
  const lines = await describeMissing(
    { ...target, apiKey: setup.key },
    all.map((a) => a.d),
  );
  return lines.map((line, i) => `${all[i]?.what}: ${line}`);
}

/** The status service's push counters by result, and its due rows. */
export async function pushMetrics(
  stack: ComposeStack,
  service: string,
): Promise<Record<string, number>> {
  const text = await metricsText(stack, service);
  const out: Record<string, number> = {};
  for (const line of text.split('\n')) {
    const result = /^herald_push_messages_total\{.*result="([a-z_]+)"/.exec(line)?.[1];
    if (result) out[result] = (out[result] ?? 0) + Number(line.split(' ').at(-1));
    if (line.startsWith('herald_push_due_rows'))
      out.dueRows = (out.dueRows ?? 0) + Number(line.split(' ').at(-1));
  }
  return out;
}

export interface PushReport {
  findings: PushFindings;
  /** The first missing and duplicated events, with their /events/status. */
  shown: string[];
  /** One line for the log and the failure messages. */
  figures: string;
}

/** The findings at the end, the failure lines and the figures (the status service's counters too). */
export async function pushReport(
  stack: ComposeStack,
  target: LoadTarget,
  load: ClusterLoad,
  setup: PushSetup,
  waitedMs: number,
): Promise<PushReport> {
  const findings = pushFindings(load, setup);
  const { owed, pushes, largest, missing, twice } = findings;
  const counts = { owed, pushes, largest, missing: missing.length, twice: twice.length };
  return {
    findings,
    shown: await describePushes(target, setup, findings),
    figures: `cluster: pushes ${JSON.stringify(counts)}, waited ${waitedMs} ms after the load stopped; status ${JSON.stringify(await pushMetrics(stack, 'status'))}`,
  };
}

/** Soft: every owed push arrived once per subscription, decrypted and verified. */
export function expectPushes(r: PushReport): void {
  expect
    .soft(
      r.shown,
      `events owed a push to each subscription of their offline recipient, missing or pushed twice (the first ${r.shown.length}, with POST /events/status); ${r.figures}`,
    )
    .toEqual([]);
  expect.soft(r.findings.overCounted, 'push counts beyond the events sent').toEqual([]);
  expect.soft(r.findings.invalid, 'pushes that did not decrypt or verify').toEqual([]);
  expect.soft(r.findings.owed, 'events owed a push').toBeGreaterThan(0);
}
