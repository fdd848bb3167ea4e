import { TOPIC_API_SUBJECT } from '@herald/proto';
import type { NatsConnection } from 'nats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { trimBefore } from '../src/trim.js';
import { type InboxFixture, request, startInboxFixture, uuid } from './support.js';

let f: InboxFixture;
let ingress: NatsConnection;
beforeAll(async () => {
  f = await startInboxFixture({ TOPICS_PER_ACCOUNT_MAX: '2', TOPIC_MEMBERS_MAX: '5' });
  // Asked as ingress asks, with ingress's own NATS user and its permissions.
  ingress = await f.client('ingress-api');
});
afterAll(async () => {
  await f?.close();
});

const ask = (q: Record<string, unknown>) => request(ingress, TOPIC_API_SUBJECT, { v: 1, ...q });
const sorted = (n: number) => Array.from({ length: n }, uuid).sort();

/** rt.topicapi.request (issue 44), as ingress's topic routes, dispatch and workers ask it. */
describe('TOPIC_API_SUBJECT', () => {
  it('snapshots a topic in chunks once per event id, whatever the membership does after', async () => {
    const account = uuid();
    const members = sorted(5);
    expect(await ask({ op: 'add', account_id: account, topic: 't', recipients: members })).toEqual({
      v: 1,
      ok: true,
      changed: 5,
      members: 5,
    });
    const id = uuid();
    const snap = { op: 'snapshot', account_id: account, topic: 't', id, chunk_size: 2 };
    const first = await ask({ ...snap, exclude: [members[1]] });
    expect(first).toEqual({ v: 1, ok: true, members: 4, chunks: 2 });
    await ask({ op: 'remove', account_id: account, topic: 't', recipients: members.slice(0, 3) });
    // The same id again (a retry): the first snapshot, not today's membership.
    expect(await ask({ ...snap, exclude: [] })).toEqual(first);
    const c0 = await ask({ op: 'chunk', account_id: account, id, chunk: 0 });
    const c1 = await ask({ op: 'chunk', account_id: account, id, chunk: 1 });
    expect(c0).toMatchObject({ ok: true, topic: 't', recipients: [members[0], members[2]] });
    expect(c1.recipients).toEqual([members[3], members[4]]);
    // Another account reads no chunk of it.
    const other = await ask({ op: 'chunk', account_id: uuid(), id, chunk: 0 });
    expect(other).toMatchObject({ ok: false, error: { code: 'not_found' } });
    // Trimmed with the status window: then its chunks are gone.
    await trimBefore(f.db, new Date(Date.now() + 60_000));
    const gone = await ask({ op: 'chunk', account_id: account, id, chunk: 0 });
    expect(gone).toMatchObject({ ok: false, error: { code: 'not_found' } });
  });

  it('refuses a change past a cap whole, naming the setting', async () => {
    const account = uuid();
    const add = (topic: string, recipients: string[]) =>
      ask({ op: 'add', account_id: account, topic, recipients });
    expect((await add('a', sorted(4))).members).toBe(4);
    const past = await add('a', sorted(2));
    expect(past).toMatchObject({ ok: false, error: { code: 'topics_full', field: 'recipients' } });
    expect(past.error.message).toContain('TOPIC_MEMBERS_MAX');
    expect((await add('a', sorted(1))).members).toBe(5);
    expect((await add('b', sorted(1))).ok).toBe(true);
    const third = await add('c', sorted(1));
    expect(third).toMatchObject({ ok: false, error: { code: 'topics_full', field: 'topic' } });
    expect(third.error.message).toContain('TOPICS_PER_ACCOUNT_MAX');
    expect(await ask({ op: 'delete', account_id: account, topic: 'b' })).toMatchObject({
      deleted: true,
    });
    expect((await add('c', sorted(1))).ok).toBe(true);
  });

  it('names the field of a bad request', async () => {
    const bad = await ask({ op: 'add', account_id: uuid(), topic: 'a b', recipients: [uuid()] });
    expect(bad).toMatchObject({ ok: false, error: { code: 'invalid_field', field: 'topic' } });
    const none = await ask({ op: 'add', account_id: uuid(), topic: 'a', recipients: [] });
    expect(none.error.field).toBe('recipients');
  });
});
