import { randomUUID } from 'node:crypto';
import { DispatchStatus, HeraldError, HeraldServer } from '@herald/sdk/server';
import { type KeyObject, type Stack, startStack } from '@herald/testkit';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { eventually, type Runtime } from './context.js';
import { tlsRuntime } from './tls-runtime.js';

/** Members as the server lists them: lower case, in order. */
const sorted = (ids: string[]) => ids.map((r) => r.toLowerCase()).sort();

/**
 * `@herald/sdk/server`'s topics (issue 44), built, against the real stack (nats-server, Postgres,
 * auth, ingress-api, socket-edge, status): membership through `herald.topics`, one event to every
 * member through `notify({ topic })`, results for server outcomes and a TypeError for a call that
 * could never succeed.
 */
describe('@herald/sdk/server topics against the real stack', () => {
  let stack: Stack;
  let key: KeyObject;
  const runtimes: Runtime[] = [];
  const heralds: HeraldServer[] = [];

  beforeAll(async () => {
    stack = await startStack({ services: ['auth', 'ingress-api', 'socket-edge', 'status'] });
    const account = (await stack.createAccount()).id;
    key = await stack.createKey({ account, kind: 'test', client: 'mobile' });
  }, 120_000);
  afterEach(async () => {
    for (const h of heralds.splice(0)) h.disconnect();
    await Promise.all(runtimes.splice(0).map((rt) => rt.close()));
  });
  afterAll(async () => {
    await stack?.stop();
  });

  const server = (apiKey = key.key): HeraldServer => {
    const rt = tlsRuntime(stack.ca);
    runtimes.push(rt);
    const h = new HeraldServer({
      apiKey,
      client: 'mobile',
      baseUrl: stack.baseUrl,
      wsUrl: stack.wsUrl,
      WebSocket: rt.WebSocket,
      fetch: rt.fetch,
      backoff: { baseMs: 50, capMs: 400 },
      device: false,
    });
    heralds.push(h);
    return h;
  };

  it('adds, pages, removes and deletes members', async () => {
    const h = server();
    const members = Array.from({ length: 1500 }, () => randomUUID().toUpperCase());
    const added = await h.topics.add('project:1.followers', members);
    expect(added).toEqual({
      status: 'ok',
      topic: 'project:1.followers',
      changed: 1500,
      members: 1500,
      httpStatus: 200,
    });
    expect(await h.topics.add('project:1.followers', members.slice(0, 3))).toMatchObject({
      changed: 0,
      members: 1500,
    });
    const listed: string[] = [];
    let cursor: string | null = null;
    do {
      const page = await h.topics.members('project:1.followers', { cursor });
      if (page.status !== 'ok') throw page.error;
      expect(page.members).toBe(1500);
      listed.push(...page.recipients);
      cursor = page.nextCursor;
    } while (cursor);
    expect(listed).toEqual(sorted(members));
    const removed = await h.topics.remove('project:1.followers', [
      ...members.slice(0, 2),
      randomUUID(),
    ]);
    expect(removed).toMatchObject({ status: 'ok', changed: 2, members: 1498 });
    const gone = await h.topics.delete('project:1.followers');
    expect(gone).toEqual({
      status: 'ok',
      topic: 'project:1.followers',
      deleted: true,
      members: 1498,
      httpStatus: 200,
    });
    const again = await h.topics.delete('project:1.followers');
    expect(again.status).toBe(DispatchStatus.failed);
    expect(again.error).toBeInstanceOf(HeraldError);
    expect(again.error).toMatchObject({ code: 'not_found', field: 'topic', httpStatus: 404 });
  });

  it('sends one event to every member but the excluded, each copy carrying the topic', async () => {
    const h = server();
    const [online, actor, ...rest] = Array.from({ length: 5 }, () => randomUUID()) as [
      string,
      string,
      ...string[],
    ];
    await h.topics.add('room:9', [online, actor, ...rest]);
    const seen: Array<{ id: string; payload: unknown }> = [];
    h.subscribe(online).listen((payload, event) => seen.push({ id: event.id, payload }));
    await eventually(() => h.connected(), 'connected');
    const sent = await h.notify({ topic: 'room:9', payload: { n: 1 }, exclude: [actor] });
    expect(sent).toEqual({
      status: DispatchStatus.accepted,
      id: expect.any(String),
      members: 4,
      httpStatus: 202,
    });
    await eventually(() => seen.length === 1, "the online member's copy");
    expect(seen[0]?.payload).toEqual({ n: 1 });
    expect(seen[0]?.id).not.toBe(sent.id);
    // A direct event still goes through the same notify.
    const direct = await h.notify({ recipient: rest[0] as string, payload: 2 });
    expect(direct.status).toBe(DispatchStatus.queued);
    // Idempotency-Key: a retry answers the first fan-out.
    const first = await h.notify({ topic: 'room:9', payload: 3, idempotencyKey: 'sdk-topic-1' });
    const retry = await h.notify({ topic: 'room:9', payload: 3, idempotencyKey: 'sdk-topic-1' });
    expect(retry).toEqual(first);
  });

  it("resolves server refusals as results: another account's topic, a bad key", async () => {
    const owner = server();
    await owner.topics.add('private', [randomUUID()]);
    const otherAccount = (await stack.createAccount()).id;
    const other = await stack.createKey({ account: otherAccount, kind: 'test', client: 'mobile' });
    const intruder = server(other.key);
    const read = await intruder.topics.members('private');
    expect(read).toMatchObject({ status: DispatchStatus.failed, httpStatus: 404 });
    expect(await intruder.notify({ topic: 'private', payload: 1 })).toMatchObject({
      status: DispatchStatus.failed,
      error: { code: 'not_found', field: 'topic' },
    });
    expect((await intruder.topics.remove('private', [randomUUID()])).status).toBe('ok');
    const badKey = server('hk_test_thisisnotakeythisisnotakeythisisnot');
    expect(await badKey.topics.add('private', [randomUUID()])).toMatchObject({
      status: DispatchStatus.failed,
      httpStatus: 401,
      error: { code: 'invalid_api_key' },
    });
  });

  it('rejects with a TypeError naming the field a call that can never succeed', async () => {
    const h = server();
    const bad: Array<[() => unknown, RegExp]> = [
      [() => h.topics.add('a/b', [randomUUID()]), /topics\.add topic/],
      [() => h.topics.add('ok', []), /topics\.add recipients must be an array of 1 to 10000/],
      [
        () =>
          h.topics.add(
            'ok',
            Array.from({ length: 10_001 }, () => randomUUID()),
          ),
        /topics\.add recipients/,
      ],
      [() => h.topics.remove('ok', [randomUUID(), 'nope']), /topics\.remove recipients\[1\]/],
      [() => h.topics.members('ok', { cursor: 'x' }), /topics\.members cursor/],
      [() => h.topics.delete('', {}), /topics\.delete topic/],
      [() => h.topics.add('ok', [randomUUID()], { client: 'tv' as 'web' }), /client/],
      [() => h.notify({ topic: 'ok', payload: undefined }), /notify payload/],
      [
        () => h.notify({ topic: 'ok', recipient: randomUUID(), payload: 1 } as never),
        /recipient or topic/,
      ],
      [() => h.notify({ topic: 'ok', payload: 1, exclude: ['x'] }), /notify exclude\[0\]/],
      [
        () =>
          h.notify({
            topic: 'ok',
            payload: 1,
            exclude: Array.from({ length: 101 }, () => randomUUID()),
          }),
        /notify exclude must be an array of 0 to 100/,
      ],
    ];
    for (const [call, message] of bad) {
      await expect(Promise.resolve().then(call)).rejects.toThrow(TypeError);
      await expect(Promise.resolve().then(call)).rejects.toThrow(message);
    }
  });
});
