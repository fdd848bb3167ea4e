import { randomUUID } from 'node:crypto';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { eventually, get, openSocket, post, type TestSocket } from '@herald/testkit';
import { type ComposeStack, composeStackFromEnv } from '@herald/testkit/compose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { streams } from './cluster-ops.js';

// Backup and restore of the cluster (scripts/cluster.sh backup DIR / restore DIR, what make backup
// and make restore STACK=cluster run), started by scripts/test-cluster.sh. Events are queued for
// three offline recipients; one drains before the backup (its ack floor recorded), one after it;
// then every container and volume goes and the backup is restored into a fresh cluster. What the
// promise allows (docs/operations.md, "Backups"): what was stored at backup time is delivered, at
// least once; what was delivered and recorded before the backup does not come again; what was
// delivered after the backup comes again, once; what was accepted after the backup is lost.

/** Most time any step of the cluster (a start, a restore) may take to be healthy. */
const HEALTHY_LIMIT_MS = 240_000;
/** Most time queued events may take to arrive once their recipient connects. */
const DRAIN_LIMIT_MS = 60_000;
/** Most time a drain's ack floor may take to be recorded (the edge's reads: 0.25, 1, 5 s). */
const FLOOR_LIMIT_MS = 30_000;
/** Most time a dispatch may keep being refused with 503 + Retry-After before it counts as failed. */
const RETRY_LIMIT_MS = 60_000;

let stack: ComposeStack;
let dir: string;
let liveKey: string;
/** A Live key in inbox mode: its events are also kept in Postgres, per recipient. */
let inboxKey: string;
const sockets: TestSocket[] = [];

beforeAll(async () => {
  stack = composeStackFromEnv();
  dir = mkdtempSync(join(tmpdir(), 'herald-cluster-backup-'));
  await stack.waitHealthy(HEALTHY_LIMIT_MS);
  // A Live key made with the admin CLI (on a paid plan): it lives in Postgres as the Test key does.
  const { accountId } = stack.demo();
  await stack.admin(
    ...[
      'account',
      'set-plan',
      '--account',
      accountId,
      '--plan',
      'startup',
      '--until',
      '2099-01-01',
    ],
  );
  const key = await stack.admin(
    ...['key', 'create', '--account', accountId, '--kind', 'live', '--client', 'mobile'],
  );
  liveKey = String(key.key);
  const inbox = await stack.admin(
    ...['key', 'create', '--account', accountId, '--kind', 'live', '--client', 'mobile'],
    ...['--inbox-days', '7'],
  );
  inboxKey = String(inbox.key);
});

afterAll(async () => {
  await Promise.all(sockets.map((s) => s.close()));
  rmSync(dir, { recursive: true, force: true });
});

/**
 * POST /notify as a client does it: a 503 with Retry-After (nothing accepted: a service still
 * reconnecting after the fault test or the restore) is sent again after that wait, for at most
 * RETRY_LIMIT_MS; any other answer is returned.
 */
async function notify(to: string, payload: unknown, apiKey = stack.demo().testKey) {
  const deadline = Date.now() + RETRY_LIMIT_MS;
  for (;;) {
    const res = await post(stack.demo().baseUrl, stack.ca, {
      recipient: to,
      payload,
      api_key: apiKey,
      client: 'mobile',
    });
    const retryAfterS = Number(res.headers['retry-after']);
    if (res.status !== 503 || !(retryAfterS > 0) || Date.now() > deadline) return res;
    await new Promise((r) => setTimeout(r, retryAfterS * 1000));
  }
}

/**
 * Queues `count` events for an offline recipient (each answered 202); their ids, in order. The
 * test sends 23 events in all: within the Test key's burst of 100.
 */
async function queue(to: string, count: number, apiKey?: string): Promise<string[]> {
  const ids: string[] = [];
  for (let n = 0; n < count; n++) {
    const res = await notify(to, { n }, apiKey);
    expect(res.status, res.text).toBe(202);
    ids.push(res.body.id as string);
  }
  return ids;
}

/** A herald.v1 socket (every event acked) for `to`, open; a device's when `device` is given. */
async function connect(
  to: string,
  apiKey = stack.demo().testKey,
  device?: string,
): Promise<TestSocket> {
  const query = new URLSearchParams({ api_key: apiKey, recipient: to, client: 'mobile' });
  if (device) query.set('device', device);
  const sock = openSocket(stack.demo().wsUrl, stack.ca, {
    apiKey,
    recipient: to,
    v1: true,
    query: query.toString(),
  });
  sockets.push(sock);
  await sock.opened;
  return sock;
}

const received = (sock: TestSocket) => sock.events().map((e) => e.id);

/** Waits until `sock` got every id in `ids`. */
async function receive(sock: TestSocket, ids: string[], what: string): Promise<void> {
  await eventually(() => ids.every((id) => received(sock).includes(id)), what, DRAIN_LIMIT_MS);
}

/** How many times each id arrived on `sock`. */
const counts = (sock: TestSocket, ids: string[]) =>
  ids.map((id) => received(sock).filter((got) => got === id).length);

async function composeOk(...args: string[]): Promise<number> {
  const started = Date.now();
  const res = await stack.compose(...args);
  expect(res.code, `scripts/cluster.sh ${args.join(' ')}\n${res.stderr.slice(-4000)}`).toBe(0);
  return Date.now() - started;
}

/** The recipient's recorded ack floor (the KV bucket herald_queue_floors), read with the nats CLI. */
async function floorId(to: string): Promise<string | undefined> {
  const key = `${stack.demo().accountId}.${to}`;
  const res = await stack.compose('nats', 'kv', 'get', 'herald_queue_floors', key, '--raw');
  if (res.code !== 0) return undefined;
  try {
    return (JSON.parse(res.stdout) as { id?: string }).id;
  } catch {
    return undefined;
  }
}

describe('backups of the cluster', () => {
  it('restores into a fresh cluster: what was queued arrives, keys work, what was delivered comes again only as the promise allows', async () => {
    const started = Date.now();
    const queued = randomUUID();
    const before = randomUUID();
    const after = randomUUID();
    const reader = randomUUID();
    const ids = {
      queued: await queue(queued, 10),
      before: await queue(before, 5),
      after: await queue(after, 5),
      // An inbox key's: kept in Postgres too; read after the restore by a device's socket.
      inbox: await queue(reader, 3, inboxKey),
    };

    // Delivered before the backup, and its floor recorded (the drain caught up).
    const early = await connect(before);
    await receive(early, ids.before, 'the 5 events of `before`, before the backup');
    const last = ids.before.at(-1);
    await eventually(
      async () => (await floorId(before)) === last,
      'the ack floor of `before` recorded at its last event',
      FLOOR_LIMIT_MS,
    );
    await early.close();

    const backupMs = await composeOk('backup', join(dir, 'b'));
    const backedUp = readdirSync(join(dir, 'b', 'jetstream')).sort();
    expect(backedUp.filter((s) => s.startsWith('HERALD_QUEUE_')).length).toBeGreaterThan(0);
    expect(backedUp).toContain('KV_herald_queue_floors');

    // Delivered after the backup was taken: the restore brings these back.
    const late = await connect(after);
    await receive(late, ids.after, 'the 5 events of `after`, after the backup');
    await late.close();

    // The disaster: every container and volume gone. Then the restore, into a fresh cluster.
    const downMs = await composeOk('down', '--volumes');
    expect(await stack.containers()).toEqual([]);
    const restoreMs = await composeOk('restore', join(dir, 'b'));
    await stack.waitHealthy(HEALTHY_LIMIT_MS);
    await eventually(
      async () =>
        (await get(stack.demo().baseUrl, stack.ca, '/readyz').catch(() => undefined))?.status ===
        200,
      'an ingress ready through the load balancer',
      HEALTHY_LIMIT_MS,
    );

    // Every stream of the backup came back, at 3 replicas on 3 nodes.
    await eventually(
      async () => {
        const now = await streams(stack, 'nats-1').catch(() => []);
        return backedUp.every((name) => {
          const s = now.find((x) => x.name === name);
          return s?.config?.num_replicas === 3 && s.cluster?.replicas?.length === 2;
        });
      },
      `every backed-up stream at 3 replicas: ${backedUp.join(', ')}`,
      HEALTHY_LIMIT_MS,
    );

    // The Test key (Postgres came back) queues one marker per recipient, 202: each recipient's
    // queue delivers in stream order, so once its marker arrived, whatever older came again has.
    const markers = new Map<string, string>();
    for (const to of [queued, before, after]) {
      const res = await notify(to, { marker: true });
      expect(res.status, res.text).toBe(202);
      markers.set(to, res.body.id as string);
    }
    const got = new Map<string, TestSocket>();
    for (const to of [queued, before, after]) {
      const sock = await connect(to);
      got.set(to, sock);
      await receive(sock, [markers.get(to) as string], `the marker of ${to} after the restore`);
    }
    const sockOf = (to: string) => got.get(to) as TestSocket;
    const drainedMs = Date.now() - started;

    // Queued at backup time: every one arrives, once.
    expect(counts(sockOf(queued), ids.queued), 'queued before the backup').toEqual(
      ids.queued.map(() => 1),
    );
    // Delivered before the backup, floor recorded: none comes again.
    expect(counts(sockOf(before), ids.before), 'delivered before the backup').toEqual(
      ids.before.map(() => 0),
    );
    // Delivered after the backup: every one comes again, once.
    expect(counts(sockOf(after), ids.after), 'delivered after the backup').toEqual(
      ids.after.map(() => 1),
    );

    // The inbox key's events reach a device that never connected before, at least once (from the
    // inbox and the queue; the SDK drops repeats by id).
    const phone = await connect(reader, inboxKey, 'phone-1');
    await receive(phone, ids.inbox, 'the inbox key events on a device after the restore');

    // Keys and the account work: a live event to an open socket with the Test key, and with the
    // Live key the admin CLI made before the backup.
    const live = await notify(queued, { live: 'test-key' });
    expect(live.status, live.text).toBe(200);
    await receive(sockOf(queued), [live.body.id as string], 'a live event with the Test key');
    const other = randomUUID();
    const liveSock = await connect(other, liveKey);
    const liveKeyed = await notify(other, { live: 'live-key' }, liveKey);
    expect(liveKeyed.status, liveKeyed.text).toBe(200);
    await receive(liveSock, [liveKeyed.body.id as string], 'a live event with the Live key');

    console.info(
      `cluster: backup ${backupMs} ms (${backedUp.length} streams), down --volumes ${downMs} ms, restore ${restoreMs} ms, whole test ${Date.now() - started} ms (markers in ${drainedMs} ms); the inbox device got ${JSON.stringify(counts(phone, ids.inbox))}`,
    );
  });
});
