import { randomUUID } from 'node:crypto';
import { openSocket, post } from '@herald/testkit';
import { type ComposeStack, composeStackFromEnv, run } from '@herald/testkit/compose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { WebhookReceiver } from '../deploy/webhook-receiver.js';
import {
  kill,
  NATS_NODES,
  openSockets,
  partition,
  queueLeader,
  restart,
  settle,
  start,
  streams,
} from './cluster-ops.js';
import { accepted, ClusterLoad, type LoadTarget } from './load.js';
import {
  expectPushes,
  type PushSetup,
  pushReport,
  setUpPush,
  subscribe,
  waitForPushes,
} from './push.js';
import { expectPusherLoad, PusherLoad } from './pusher-load.js';
import { failures, figures, type PhaseWindow, table, webhookFigures } from './report.js';
import {
  describeMissing,
  hooksMissing,
  startReceiver,
  waitForHooks,
  webhookMetrics,
} from './webhooks.js';

// Herald scaled out (deploy/compose.cluster.yaml), started by scripts/test-cluster.sh through
// `make cluster-up`. A steady load runs through the load balancer the whole time (online and
// offline recipients, plain and herald.v1 sockets) while the faults a cluster exists to survive
// happen one after the other; at the end every recipient connects again and every event answered
// 200 or 202 must have arrived, and its event.delivered webhook too (a live event's included) at
// the test's HTTPS receiver (webhooks.ts), which the status service sends to through the faults.
// Two more offline recipients get their events through a key that pushes (push.ts): they stay
// offline until, after the load, every accepted event of theirs was in exactly one push to each
// of their Web Push subscriptions at the test's push service; then they connect as the rest do.
// Beside it, durable Pusher user events (pusher-load.ts): the `pusher` library's sendToUser
// through the load balancer to pusher-js users signed in through it, each accepted one received.
// The figures of each fault are printed for docs/operations.md.

/** Most time the cluster may take to be healthy again after a fault. */
const SETTLE_LIMIT_MS = 240_000;
/** Load on the settled cluster before the next fault. */
const SETTLED_LOAD_MS = 10_000;
/** How long a killed container stays down before it is started again. */
const DOWN_MS = 15_000;
/** The partition's length (the issue's 20 seconds). */
const PARTITION_MS = 20_000;
/** Most time every waiting event may take to arrive once everyone reconnected. */
const DRAIN_LIMIT_MS = 180_000;
/** Most time every accepted event's event.delivered webhook may take once the drain ended. */
const WEBHOOK_LIMIT_MS = 120_000;
/** Most time every owed push may take once the load stopped (its window and a sender's poll). */
const PUSH_LIMIT_MS = 120_000;

const HERALD_SERVICES = [
  'auth',
  'ingress-1',
  'ingress-2',
  'edge-1',
  'edge-2',
  'retention',
  'status',
];

/** The status instances: each writes status records and sends webhooks (one; none is killed). */
const STATUS = ['status'];

let stack: ComposeStack;
let load: ClusterLoad;
let target: LoadTarget;
let receiver: WebhookReceiver;
let push: PushSetup;
let pusher: PusherLoad;

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

beforeAll(async () => {
  stack = composeStackFromEnv();
  await stack.waitHealthy(240_000);
  // A Live key on the largest plan: the Test key's 10 connections and 10 dispatches a second are
  // less than this load needs.
  const demo = stack.demo();
  await stack.admin(
    'account',
    'set-plan',
    '--account',
    demo.accountId,
    '--plan',
    'startup',
    '--until',
    '2099-01-01',
  );
  const key = await stack.admin(
    'key',
    'create',
    '--account',
    demo.accountId,
    '--kind',
    'live',
    '--client',
    'mobile',
  );
  target = { baseUrl: demo.baseUrl, wsUrl: demo.wsUrl, ca: stack.ca, apiKey: String(key.key) };
  // A Pusher app bound to that key, made as an operator makes it.
  const app = await stack.admin<{ app_id: string; key: string; secret: string }>(
    ...['pusher-app', 'create', '--account', demo.accountId, '--key-id', String(key.id)],
  );
  pusher = new PusherLoad(target, app, { online: 4, offline: 2 });
  // The account's VAPID key, a key that pushes, and its recipients' subscriptions at the push
  // service on the host, before any event is sent.
  push = await setUpPush(stack);
  load = new ClusterLoad(
    target,
    { onlinePlain: 4, onlineV1: 4, offlinePlain: 2, offlineV1: 2, offlinePush: 2 },
    push.key,
  );
  await subscribe(push, target, load);
  // The account's one webhook endpoint, made as an operator makes it, for event.delivered.
  receiver = await startReceiver(stack);
});

afterAll(async () => {
  await load?.close();
  pusher?.close();
  await receiver?.close();
  await push?.service.stop();
});

describe('the cluster', () => {
  it('lists all three NATS nodes in every Herald service, and keeps every stream at 3 replicas', async () => {
    const res = await stack.compose('config', '--format', 'json');
    expect(res.code, res.stderr).toBe(0);
    const services = (
      JSON.parse(res.stdout) as {
        services: Record<string, { environment?: Record<string, string> }>;
      }
    ).services;
    for (const name of HERALD_SERVICES) {
      const url = services[name]?.environment?.NATS_URL ?? '';
      expect(url.split(',').sort(), name).toEqual(NATS_NODES.map((n) => `tls://${n}:4222`));
    }
    const all = await streams(stack, 'nats-1');
    expect(all.filter((s) => s.name.startsWith('HERALD_QUEUE_')).length).toBeGreaterThan(0);
    const notR3 = all
      .filter((s) => s.config?.num_replicas !== 3 || (s.cluster?.replicas?.length ?? 0) !== 2)
      .map((s) => `${s.name} (R${s.config?.num_replicas})`);
    expect(notR3, 'streams not at 3 replicas').toEqual([]);
  });

  it('serves the README quickstart through the load balancer with the Test key make cluster-up printed', async () => {
    const demo = stack.demo();
    const to = randomUUID();
    const notify = (payload: unknown) =>
      post(demo.baseUrl, stack.ca, {
        recipient: to,
        payload,
        api_key: demo.testKey,
        client: 'mobile',
      });
    const queued = await notify({ hello: 'world' });
    expect(queued.status, queued.text).toBe(202);
    const sock = openSocket(demo.wsUrl, stack.ca, {
      apiKey: demo.testKey,
      recipient: to,
      client: 'mobile',
    });
    try {
      await sock.opened;
      const [first] = await sock.waitForFrames(1, 30_000);
      expect(JSON.parse(first?.text ?? 'null')).toEqual({ hello: 'world' });
      const live = await notify({ live: true });
      expect(live.status, live.text).toBe(200);
      const frames = await sock.waitForFrames(2, 30_000);
      expect(JSON.parse(frames[1]?.text ?? 'null')).toEqual({ live: true });
    } finally {
      await sock.close();
    }
  });

  it('loses no event answered 200 or 202 through node kills, a partition, edge and ingress kills and rolling restarts', async () => {
    await load.connectOnline();
    load.startSending(3, 50);
    await pusher.connectOnline();
    pusher.startSending(100);
    const windows: PhaseWindow[] = [];
    const online = load.recipients.filter((r) => r.online);
    const phase = async (name: string, fault: () => Promise<void>) => {
      load.phase = name;
      pusher.phase = name;
      const started = Date.now();
      await fault();
      const settled = await settle(stack, SETTLE_LIMIT_MS);
      await load.allConnected(SETTLE_LIMIT_MS, online);
      // pusher-js reconnects on its own schedule: the end's check counts what that cost.
      await pusher.allSignedIn(SETTLE_LIMIT_MS).catch((err) => console.warn(`cluster: ${err}`));
      console.info(`cluster: ${name}: settled ${settled} ms after the fault ended`);
      await sleep(SETTLED_LOAD_MS);
      windows.push({ name, start: started, end: Date.now() });
    };

    await phase('steady (no fault)', () => sleep(20_000));
    const leader = await queueLeader(stack);
    await phase(
      `docker kill ${leader} (queue leader), start after ${DOWN_MS / 1000} s`,
      async () => {
        await kill(stack, leader);
        await sleep(DOWN_MS);
        await start(stack, leader);
      },
    );
    const cut = await queueLeader(stack);
    await phase(`network disconnect ${cut} (queue leader) for ${PARTITION_MS / 1000} s`, () =>
      partition(stack, cut, PARTITION_MS),
    );
    // The edge holding more of the load's sockets (after the NATS faults they may all be on one).
    const held = await Promise.all(['edge-1', 'edge-2'].map((e) => openSockets(stack, e)));
    const edge = (held[0] ?? 0) >= (held[1] ?? 0) ? 'edge-1' : 'edge-2';
    const sockets = Math.max(...held);
    await phase(
      `docker kill ${edge} (${sockets} sockets), start after ${DOWN_MS / 1000} s`,
      async () => {
        await kill(stack, edge);
        await sleep(DOWN_MS);
        await start(stack, edge);
      },
    );
    await phase(`docker kill ingress-1, start after ${DOWN_MS / 1000} s`, async () => {
      await kill(stack, 'ingress-1');
      await sleep(DOWN_MS);
      await start(stack, 'ingress-1');
    });
    await phase('rolling restart: edge-1, then edge-2', async () => {
      await restart(stack, 'edge-1');
      await settle(stack, SETTLE_LIMIT_MS);
      await restart(stack, 'edge-2');
    });
    await load.stopSending();
    await pusher.stopSending();
    // Every owed push, while the push recipients are still offline (no socket can prove any of
    // their events first), bounded.
    const pushWaitedMs = await waitForPushes(load, push, PUSH_LIMIT_MS);

    // The end: everyone (offline recipients too) connects through the load balancer and reads
    // what waits for them.
    load.phase = 'after';
    pusher.phase = 'after';
    await load.reconnectEveryone();
    await pusher.reconnectEveryone();
    const deadline = Date.now() + DRAIN_LIMIT_MS;
    while (load.missing().length + pusher.missing().length > 0 && Date.now() < deadline)
      await sleep(500);
    const pusherFigures = `cluster: pusher ${JSON.stringify(pusher.figures())}`;
    console.info(pusherFigures);
    // Every accepted event's event.delivered webhook, polling, bounded once the drain ended.
    const hooksAfterMs = await waitForHooks(load, receiver, WEBHOOK_LIMIT_MS);
    const hooksLost = hooksMissing(load, receiver);
    const hookMetrics = await Promise.all(STATUS.map((s) => webhookMetrics(stack, s)));
    // The first lost ones with what POST /events/status says of them (before any assertion).
    const hooksLostShown = hooksLost.length > 0 ? await describeMissing(target, hooksLost) : [];
    // Pushes, counted again now that their recipients were delivered to: none came twice since.
    const pushed = await pushReport(stack, target, load, push, pushWaitedMs);
    console.info(pushed.figures);

    const rows = windows.map((w) => figures(load, w));
    console.info(
      `cluster: figures\n${table(rows)}\n\nwhat the dispatches not answered 200/202 got:\n${failures(load, windows)}`,
    );
    const stats = await run('docker', [
      'stats',
      '--no-stream',
      '--format',
      '{{.Name}} {{.MemUsage}}',
    ]);
    console.info(`cluster: memory after the run\n${stats.stdout}`);
    const hookFigures = `cluster: webhooks ${JSON.stringify(webhookFigures(load, receiver))}, waited ${hooksAfterMs} ms after the drain ended; ${STATUS.map((s, i) => `${s} ${JSON.stringify(hookMetrics[i])}`).join(', ')}`;
    console.info(hookFigures);
    const invalidFrames = load.invalidFrames();

    // Soft: a run reports every kind of loss it saw, not only the first.
    const missing = load.missing();
    expect
      .soft(
        missing.map((d) => `${d.phase}: seq ${d.seq} (${d.status})`),
        'events answered 200/202 and never delivered',
      )
      .toEqual([]);
    expect
      .soft(
        invalidFrames.map((f) => `${f.recipient} (${f.v1 ? 'herald.v1' : 'plain'}): ${f.text}`),
        'frames that were not JSON',
      )
      .toEqual([]);
    expect
      .soft(
        hooksLostShown,
        `${hooksLost.length} of ${load.dispatches.filter(accepted).length} events answered 200/202 with no event.delivered webhook ${hooksAfterMs} ms after the drain ended (the first ${hooksLostShown.length}, with POST /events/status); ${hookFigures}`,
      )
      .toEqual([]);
    expectPushes(pushed);
    expectPusherLoad(pusher, pusherFigures);
    expect(receiver.invalid, 'webhook requests that failed standardwebhooks verification').toEqual(
      [],
    );
    for (const f of rows) {
      // The load really ran through every fault, and every refusal was an honest one.
      expect(f.answered, `${f.phase}: answered`).toBeGreaterThan(0);
      expect(f.unexpected, `${f.phase}: answers other than 200, 202 or 503 + Retry-After`).toBe(0);
    }
    const unexpected = load.dispatches.filter(
      (d) => d.status !== 0 && !accepted(d) && !(d.status === 503 && d.retryAfter),
    );
    expect(unexpected.slice(0, 5).map((d) => `${d.status} ${d.error}`)).toEqual([]);
    // Killing an edge moved its sockets: the fault reached clients.
    const edgeKill = rows.find((f) => f.phase.startsWith(`docker kill ${edge}`));
    expect(edgeKill?.socketsLost).toBeGreaterThan(0);
  });
});
