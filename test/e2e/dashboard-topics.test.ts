import { randomUUID } from 'node:crypto';
import { request } from '@herald/testkit';
import { describe, expect, it } from 'vitest';
import { eventually, useStack } from './fixtures.js';
import { notifyTopic, putMembers, recipients } from './topic-fixtures.js';

/**
 * The dashboard's topics routes (issue 44) on auth's listener: the session's account's topics with
 * their member counts and its last topic events with their progress, read from the status
 * service over NATS; never another account's.
 */
describe('dashboard API: topics', () => {
  const stack = useStack({ services: ['auth', 'ingress-api', 'socket-edge', 'status'] });
  const authUrl = () => `https://127.0.0.1:${stack().ports.auth}`;

  /** A new account, logged in, with a mobile Test key. */
  async function signup() {
    const email = `topics-${randomUUID()}@test.herald`;
    const password = randomUUID();
    const made = await request('POST', `${authUrl()}/v1/accounts`, stack().ca, {
      email,
      password,
    });
    expect(made.status).toBe(201);
    const res = await request('POST', `${authUrl()}/v1/sessions`, stack().ca, { email, password });
    const cookie = String(res.headers['set-cookie'] ?? '').split(';')[0] ?? '';
    const headers = { cookie, 'x-herald-csrf': res.body.csrf as string };
    const key = await request(
      'POST',
      `${authUrl()}/v1/keys/test`,
      stack().ca,
      { client: 'mobile' },
      headers,
    );
    expect(key.status).toBe(201);
    return { headers, tenant: { account: made.body.id as string, key: key.body } };
  }

  const get = (path: string, headers: Record<string, string> = {}) =>
    request('GET', `${authUrl()}${path}`, stack().ca, undefined, headers);

  it("lists the account's topics with member counts and its fan-outs' progress, never another's", async () => {
    const s = stack();
    const a = await signup();
    const b = await signup();
    await putMembers(s, a.tenant, 'project:1.followers', recipients(30));
    await putMembers(s, a.tenant, 'room:2', recipients(2));
    await putMembers(s, b.tenant, 'theirs', recipients(1));
    const sent = await notifyTopic(s, a.tenant, 'project:1.followers');
    expect(sent.status).toBe(202);

    const topics = await get('/v1/dashboard/topics', a.headers);
    expect(topics.status).toBe(200);
    expect(topics.body).toEqual({
      topics: [
        { topic: 'project:1.followers', members: 30, created_at: expect.any(String) },
        { topic: 'room:2', members: 2, created_at: expect.any(String) },
      ],
      next_after: null,
    });
    const page = await get('/v1/dashboard/topics?limit=1', a.headers);
    expect(page.body.topics.map((t: { topic: string }) => t.topic)).toEqual([
      'project:1.followers',
    ]);
    expect(page.body.next_after).toBe('project:1.followers');
    const next = await get('/v1/dashboard/topics?limit=1&after=project:1.followers', a.headers);
    expect(next.body.topics.map((t: { topic: string }) => t.topic)).toEqual(['room:2']);

    await eventually(
      async () => {
        const res = await get('/v1/dashboard/topic-events', a.headers);
        const [e] = res.body.events ?? [];
        return e?.id === sent.body.id && e.pending === 30;
      },
      "the fan-out's copies counted as pending",
      30_000,
    );
    const events = await get('/v1/dashboard/topic-events', a.headers);
    expect(events.body.events).toEqual([
      {
        id: sent.body.id,
        topic: 'project:1.followers',
        status: 'pending',
        members: 30,
        sent: 0,
        pending: 30,
        delivered: 0,
        failed: 0,
        created_at: expect.any(String),
      },
    ]);

    // Another account sees its own only.
    const theirs = await get('/v1/dashboard/topics', b.headers);
    expect(theirs.body.topics.map((t: { topic: string }) => t.topic)).toEqual(['theirs']);
    expect((await get('/v1/dashboard/topic-events', b.headers)).body.events).toEqual([]);
  });

  it('needs a session, and names the field at fault', async () => {
    expect((await get('/v1/dashboard/topics')).status).toBe(401);
    expect((await get('/v1/dashboard/topic-events')).status).toBe(401);
    const a = await signup();
    const over = await get('/v1/dashboard/topics?limit=201', a.headers);
    expect(over.status).toBe(400);
    expect(over.body.error.field).toBe('limit');
    const events = await get('/v1/dashboard/topic-events?limit=51', a.headers);
    expect(events.status).toBe(400);
    expect(events.body.error.field).toBe('limit');
  });
});
