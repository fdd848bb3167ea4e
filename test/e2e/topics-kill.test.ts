import { type NatsConnection, connect as natsConnect } from 'nats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect, eventually, newTenant, useStack } from './fixtures.js';
import {
  notifyTopic,
  putMembers,
  queuedPerRecipient,
  recipients,
  topicStatus,
} from './topic-fixtures.js';

const MEMBERS = 4000;
const CHUNK = 200;
const WORKERS = 1;

/**
 * A topic event's fan-out through a kill (issue 44): the only ingress, the one holding the
 * chunk, is killed (SIGKILL) mid-fan-out and started again. JetStream gives the unacked chunk
 * to the new worker after FANOUT_ACK_WAIT_MS; the copies' derived ids make what the dead worker
 * had already placed duplicates that the queue's window drops and herald.v1 clients drop.
 * Slow workers (one chunk, one copy at a time) so the kill lands mid-way.
 */
describe('topics: a worker killed mid-fan-out', () => {
  const stack = useStack({
    services: ['auth', 'ingress-api', 'socket-edge', 'status'],
    env: {
      'ingress-api': {
        FANOUT_ACK_WAIT_MS: '3000',
        FANOUT_WORKERS: String(WORKERS),
        FANOUT_COPY_CONCURRENCY: '1',
        FANOUT_CHUNK_SIZE: String(CHUNK),
      },
    },
  });
  let nc: NatsConnection;
  beforeAll(async () => {
    nc = await natsConnect(stack().nats.connectOptions());
  });
  afterAll(async () => {
    await nc?.close();
  });

  it('gets every member at least one copy, duplicates counted and bounded by the chunk in hand', async () => {
    const s = stack();
    const tenant = await newTenant(s);
    const members = recipients(MEMBERS);
    expect((await putMembers(s, tenant, 'all', members)).status).toBe(200);
    const online = [members[0], members[MEMBERS - 1]] as string[];
    const sockets = await Promise.all(
      online.map((r) => connect(s, { apiKey: tenant.key.key, recipient: r, v1: true })),
    );
    const res = await notifyTopic(s, tenant, 'all');
    expect(res.status, res.text).toBe(202);
    const id = res.body.id as string;
    const recorded = async () => {
      const v = await topicStatus(nc, tenant, id);
      return v.sent + v.pending + v.delivered + v.failed;
    };
    // Mid-way: some chunks done, most not.
    await eventually(async () => (await recorded()) >= 3 * CHUNK, 'the fan-out under way', 60_000);
    await s.stopService('ingress-api', 'SIGKILL');
    const atKill = await recorded();
    expect(atKill).toBeLessThan(MEMBERS);
    await s.startService('ingress-api');

    const jsm = await nc.jetstreamManager();
    const offline = members.slice(1, MEMBERS - 1);
    await eventually(
      async () => {
        const stored = await queuedPerRecipient(jsm, tenant.account);
        return offline.every((r) => (stored.get(r) ?? 0) >= 1);
      },
      'every offline member has a stored copy',
      120_000,
    );
    await eventually(
      () => sockets.every((sk) => sk.frames.some((f) => f.envelope?.type === 'event')),
      'every connected member has a live copy',
      30_000,
    );
    await eventually(async () => (await recorded()) === MEMBERS, 'every copy recorded', 60_000);
    const stored = await queuedPerRecipient(jsm, tenant.account);
    const storedDuplicates = offline.reduce((n, r) => n + ((stored.get(r) ?? 0) - 1), 0);
    const liveDuplicates = sockets.reduce(
      (n, sk) => n + sk.frames.filter((f) => f.envelope?.type === 'event').length - 1,
      0,
    );
    // The kill took a chunk in hand: JetStream delivered more chunks than the event has.
    const deliveries = (await jsm.consumers.info('HERALD_FANOUT', 'herald_fanout')).delivered
      .consumer_seq;
    console.log(
      `topics-kill: ${MEMBERS} members, ${atKill} copies recorded at the kill, ${deliveries} chunk deliveries for ${MEMBERS / CHUNK} chunks; duplicates: ${storedDuplicates} stored, ${liveDuplicates} live`,
    );
    expect(deliveries).toBeGreaterThan(MEMBERS / CHUNK);
    // Each copy's derived id: the queue's duplicate window keeps a redelivered chunk's stores out.
    expect(storedDuplicates).toBe(0);
    expect(liveDuplicates).toBeLessThanOrEqual(CHUNK * WORKERS);
    const view = await topicStatus(nc, tenant, id);
    expect(view.failed).toBe(0);
    for (const sk of sockets) await sk.close();
  }, 240_000);
});
