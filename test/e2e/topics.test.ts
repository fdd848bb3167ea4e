import { type NatsConnection, connect as natsConnect } from 'nats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect, eventually, newTenant, recipient, useStack } from './fixtures.js';
import {
  listAll,
  notifyTopic,
  putMembers,
  queuedPerRecipient,
  recipients,
  topicCall,
  topicStatus,
} from './topic-fixtures.js';

/** The caps, set low enough to reach: 3 topics per account, 10,000 members per topic. */
const TOPICS_CAP = 3;
const MEMBERS_CAP = 10_000;

/**
 * Topics (issue 44) on the whole stack: membership in the status service's Postgres through
 * ingress's routes, a topic event's fan-out through HERALD_FANOUT to every member, each copy
 * live or queued as a direct event, its status counted under the topic event's id.
 */
describe('topics', () => {
  const stack = useStack({
    services: ['auth', 'ingress-api', 'socket-edge', 'status'],
    env: {
      status: {
        TOPICS_PER_ACCOUNT_MAX: String(TOPICS_CAP),
        TOPIC_MEMBERS_MAX: String(MEMBERS_CAP),
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

  it('adds, lists in pages, removes idempotently and deletes a topic', async () => {
    const s = stack();
    const tenant = await newTenant(s);
    const members = recipients(2500);
    const put = await putMembers(s, tenant, 'project:1.followers', members);
    expect(put.status).toBe(200);
    expect(put.body).toEqual({ topic: 'project:1.followers', changed: 2500, members: 2500 });
    // Idempotent: the same members again change nothing.
    const again = await putMembers(s, tenant, 'project:1.followers', members.slice(0, 10));
    expect(again.body).toMatchObject({ changed: 0, members: 2500 });
    expect(await listAll(s, tenant, 'project:1.followers')).toEqual(members);
    const removed = await topicCall(s, 'DELETE', '/topics/project:1.followers/members', {
      api_key: tenant.key.key,
      recipients: [...members.slice(0, 5), recipient()],
    });
    expect(removed.body).toMatchObject({ changed: 5, members: 2495 });
    const gone = await topicCall(
      s,
      'DELETE',
      `/topics/project:1.followers?api_key=${tenant.key.key}`,
    );
    expect(gone.status).toBe(200);
    expect(gone.body).toMatchObject({ deleted: true, members: 2495 });
    const list = await topicCall(
      s,
      'GET',
      `/topics/project:1.followers/members?api_key=${tenant.key.key}`,
    );
    expect(list.status).toBe(404);
    expect(list.body.error.field).toBe('topic');
  });

  it('holds each cap at its edge, naming the setting', async () => {
    const s = stack();
    const tenant = await newTenant(s);
    for (let i = 0; i < TOPICS_CAP; i++) {
      expect((await putMembers(s, tenant, `t${i}`, [recipient()])).status).toBe(200);
    }
    const over = await putMembers(s, tenant, 'one-more', [recipient()]);
    expect(over.status).toBe(507);
    expect(over.body.error.code).toBe('topics_full');
    expect(over.body.error.message).toContain('TOPICS_PER_ACCOUNT_MAX');
    // An existing topic still takes members.
    expect((await putMembers(s, tenant, 't0', [recipient()])).status).toBe(200);

    const other = await newTenant(s);
    const full = recipients(MEMBERS_CAP);
    expect((await putMembers(s, other, 'big', full)).body.members).toBe(MEMBERS_CAP);
    const past = await putMembers(s, other, 'big', [recipient()]);
    expect(past.status).toBe(507);
    expect(past.body.error.message).toContain('TOPIC_MEMBERS_MAX');
    // A member already there is no new member: at the cap it is still accepted.
    expect((await putMembers(s, other, 'big', [full[0] as string])).status).toBe(200);
    // 10,000 per call, and not one more.
    const tooMany = await putMembers(s, other, 'other', recipients(10_001));
    expect(tooMany.status).toBe(400);
    expect(tooMany.body.error.field).toBe('recipients');
  });

  it('names the field at fault in bad input', async () => {
    const s = stack();
    const tenant = await newTenant(s);
    const badName = await putMembers(s, tenant, 'has space'.replace(' ', '%20'), [recipient()]);
    expect(badName.status).toBe(400);
    expect(badName.body.error.field).toBe('topic');
    const badMember = await putMembers(s, tenant, 'ok', [recipient(), 'not-a-uuid']);
    expect(badMember.status).toBe(400);
    expect(badMember.body.error.field).toBe('recipients.1');
    const noList = await topicCall(s, 'PUT', '/topics/ok/members', { api_key: tenant.key.key });
    expect(noList.body.error).toMatchObject({ code: 'missing_field', field: 'recipients' });
    expect((await putMembers(s, tenant, 'ok', [recipient()])).status).toBe(200);
    const both = await notifyTopic(s, tenant, 'ok', { recipient: recipient() });
    expect(both.body.error.field).toBe('topic');
    const badExclude = await notifyTopic(s, tenant, 'ok', { exclude: ['x'] });
    expect(badExclude.status).toBe(400);
    expect(badExclude.body.error.field).toBe('exclude.0');
    const badTopic = await notifyTopic(s, tenant, 'a/b');
    expect(badTopic.body.error.field).toBe('topic');
    const noTopic = await notifyTopic(s, tenant, 'nobody');
    expect(noTopic.status).toBe(404);
    expect(noTopic.body.error.field).toBe('topic');
  });

  it("keeps every account's topics its own, and takes dispatch keys only", async () => {
    const s = stack();
    const owner = await newTenant(s);
    const intruder = await newTenant(s);
    const members = recipients(3);
    await putMembers(s, owner, 'private', members);
    const read = await topicCall(s, 'GET', `/topics/private/members?api_key=${intruder.key.key}`);
    expect(read.status).toBe(404);
    const change = await topicCall(s, 'DELETE', '/topics/private/members', {
      api_key: intruder.key.key,
      recipients: members,
    });
    expect(change.body).toMatchObject({ changed: 0 });
    const drop = await topicCall(s, 'DELETE', `/topics/private?api_key=${intruder.key.key}`);
    expect(drop.status).toBe(404);
    const send = await notifyTopic(s, intruder, 'private');
    expect(send.status).toBe(404);
    expect(await listAll(s, owner, 'private')).toEqual(members);
    const { id: listener } = await s.createAccount();
    const subscribeOnly = await s.createKey({
      account: listener,
      kind: 'test',
      scope: 'subscribe',
    });
    const refused = await putMembers(s, { account: listener, key: subscribeOnly }, 'private', [
      recipient(),
    ]);
    expect(refused.status).toBe(403);
    expect(refused.body.error.code).toBe('scope_denied');
    const badKey = await putMembers(
      s,
      { account: owner.account, key: { ...owner.key, key: 'hk_test_nope' } },
      'private',
      [recipient()],
    );
    expect(badKey.status).toBe(401);
  });

  it('holds a web key to its Origin, as /notify does', async () => {
    const s = stack();
    const origin = 'https://app.example.com';
    const tenant = await newTenant(s, 'web', origin);
    const without = await putMembers(s, tenant, 'web', [recipient()]);
    expect(without.status).toBe(403);
    expect(without.body.error.code).toBe('origin_mismatch');
    const put = await topicCall(
      s,
      'PUT',
      '/topics/web/members',
      { api_key: tenant.key.key, recipients: [recipient()] },
      { Origin: origin },
    );
    expect(put.status).toBe(200);
    const elsewhere = await notifyTopic(s, tenant, 'web', {}, { Origin: 'https://evil.example' });
    expect(elsewhere.status).toBe(403);
    expect((await notifyTopic(s, tenant, 'web', {}, { Origin: origin })).status).toBe(202);
  });

  it('answers a retry under the same Idempotency-Key with the first fan-out, sent once', async () => {
    const s = stack();
    const tenant = await newTenant(s);
    const members = recipients(50);
    await putMembers(s, tenant, 'retry', members);
    const headers = { 'Idempotency-Key': 'fanout-1' };
    const first = await notifyTopic(s, tenant, 'retry', {}, headers);
    expect(first.status).toBe(202);
    const again = await notifyTopic(s, tenant, 'retry', {}, headers);
    expect(again.status).toBe(202);
    expect(again.body).toEqual(first.body);
    const other = await notifyTopic(s, tenant, 'retry', { payload: { other: true } }, headers);
    expect(other.status).toBe(422);
    await eventually(
      async () => {
        const v = await topicStatus(nc, tenant, first.body.id);
        return v.pending === members.length;
      },
      'every copy queued',
      30_000,
    );
    const stored = await queuedPerRecipient(await nc.jetstreamManager(), tenant.account);
    expect(members.filter((r) => stored.get(r) !== 1)).toEqual([]);
  });

  it('sends one copy to each of 10,000 members, excluding the actor, from the snapshot at acceptance', async () => {
    const s = stack();
    const tenant = await newTenant(s);
    const members = recipients(MEMBERS_CAP);
    expect((await putMembers(s, tenant, 'everyone', members)).status).toBe(200);
    const online = members.slice(0, 3);
    const sockets = await Promise.all(
      online.map((r) => connect(s, { apiKey: tenant.key.key, recipient: r, v1: true })),
    );
    const actor = members[5000] as string;
    const res = await notifyTopic(s, tenant, 'everyone', { exclude: [actor] });
    expect(res.status, res.text).toBe(202);
    expect(res.body).toMatchObject({ status: 'accepted', members: MEMBERS_CAP - 1 });
    const id = res.body.id as string;
    // While it fans out: members added and removed change nothing for this event.
    const late = recipients(5);
    const leaving = members.slice(9000, 9010);
    await putMembers(s, tenant, 'everyone', late.concat());
    await topicCall(s, 'DELETE', '/topics/everyone/members', {
      api_key: tenant.key.key,
      recipients: leaving,
    });

    await eventually(
      async () => {
        const v = await topicStatus(nc, tenant, id);
        return v.sent + v.pending + v.delivered + v.failed === MEMBERS_CAP - 1;
      },
      'every copy recorded',
      120_000,
    );
    const view = await topicStatus(nc, tenant, id);
    expect(view).toMatchObject({ members: MEMBERS_CAP - 1, failed: 0 });
    // A live copy is `sent` once its socket proved it (and `delivered` once the edge's record is in).
    expect(view.sent + view.delivered).toBe(3);
    expect(view.pending).toBe(MEMBERS_CAP - 1 - 3);

    // Each connected member: one copy (one id), carrying the topic. A live copy whose proof came
    // too late under load is queued under the same id (at least once, as any event): the id holds.
    for (const socket of sockets) {
      const frames = socket.frames.map((f) => JSON.parse(f.text)).filter((f) => f.type === 'event');
      expect(new Set(frames.map((f) => f.id)).size).toBe(1);
      expect(frames[0]).toMatchObject({ topic: 'everyone', payload: { hello: 'everyone' } });
      await socket.close();
    }
    // Each other member: exactly one stored copy; the actor and the late ones none.
    const stored = await queuedPerRecipient(await nc.jetstreamManager(), tenant.account);
    const offline = members.filter((r) => r !== actor && !online.includes(r));
    expect(offline.filter((r) => stored.get(r) !== 1)).toEqual([]);
    expect([...stored.keys()].filter((r) => !offline.includes(r) && !online.includes(r))).toEqual(
      [],
    );
    expect(stored.has(actor)).toBe(false);
    for (const r of late) expect(stored.has(r)).toBe(false);
    for (const r of leaving) expect(stored.get(r)).toBe(1);
    // A queued copy carries its topic too, in an `event` frame and inside a batched `events` frame.
    const [one, two] = offline as [string, string];
    const drained = await connect(s, { apiKey: tenant.key.key, recipient: one, v1: true });
    const batched = await connect(s, {
      apiKey: tenant.key.key,
      recipient: two,
      v1: true,
      batch: true,
    });
    await drained.waitForEvents(1);
    await batched.waitForEvents(1);
    expect(JSON.parse(drained.frames[0]?.text ?? '{}')).toMatchObject({
      type: 'event',
      topic: 'everyone',
    });
    const frame = JSON.parse(batched.frames[0]?.text ?? '{}');
    const event = frame.type === 'events' ? frame.events[0] : frame;
    expect(event).toMatchObject({ topic: 'everyone', payload: { hello: 'everyone' } });
    await drained.close();
    await batched.close();
  }, 240_000);
});
