import { createLogger } from '@herald/kit';
import { DispatchStatus, EventHeaders } from '@herald/proto';
import { ensureQueueStream, QueueLayout, queueStreamConfig, queueStreamOf } from '@herald/queue';
import { versionAtLeast } from '@herald/testkit';
import { RetentionPolicy, type StreamConfig } from 'nats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createIngress } from '../src/index.js';
import { ACCOUNT_A } from './support/auth-responder.js';
import {
  type IngressFixture,
  newRecipient,
  notifyBody,
  queuedMessages,
  startIngressFixture,
  testConfig,
} from './support/fixture.js';
import { request } from './support/http.js';

const CAP = 3;
const limits = { maxPerRecipient: CAP, duplicateWindowMs: 120_000, maxMsgSize: 65_536 + 1024 };

let fx: IngressFixture;
beforeAll(async () => {
  fx = await startIngressFixture({ QUEUE_MAX_PER_RECIPIENT: String(CAP) });
});
afterAll(async () => {
  await fx?.stop();
});

const post = (body: unknown) => request(fx.baseUrl, { body });
const layout = new QueueLayout();
const FIRST = layout.streams[0] as string;

/** A fresh recipient whose queue lives in `stream`. */
function recipientIn(stream: string): string {
  for (;;) {
    const r = newRecipient();
    if (queueStreamOf(ACCOUNT_A, r) === stream) return r;
  }
}

describe('the queue stream', () => {
  it('is created at start with discard-new per recipient and the configured limits', async () => {
    const { config } = await fx.jsm.streams.info(FIRST);
    expect(config).toMatchObject({
      subjects: layout.subjectsOf(0),
      retention: 'limits',
      storage: 'file',
      discard: 'new',
      discard_new_per_subject: true,
      max_msgs_per_subject: CAP,
      max_msg_size: fx.config.PAYLOAD_LIMIT_BYTES + 1024,
      duplicate_window: fx.config.IDEMPOTENCY_TTL_MS * 1_000_000,
    });
  });

  it('is left alone when its limits already match, and updated when they change', async () => {
    expect((await ensureQueueStream(fx.jsm, limits)).change).toBe('unchanged');
    const updated = await ensureQueueStream(fx.jsm, { ...limits, maxPerRecipient: CAP + 1 });
    expect(updated.change).toBe('updated');
    expect(updated.info.config.max_msgs_per_subject).toBe(CAP + 1);
    // Lowering a cap would make the server delete stored events over it: kept unless allowed.
    const kept = await ensureQueueStream(fx.jsm, limits);
    expect(kept).toMatchObject({ change: 'unchanged', kept: ['max_msgs_per_subject'] });
    expect(kept.info.config.max_msgs_per_subject).toBe(CAP + 1);
    const lowered = await ensureQueueStream(fx.jsm, { ...limits, allowShrink: true });
    expect(lowered).toMatchObject({ change: 'updated', kept: [] });
    expect(lowered.info.config.max_msgs_per_subject).toBe(CAP);
  });

  it('starts with a byte cap on the pinned server (>= 2.10.5, where the cap refuses instead of dropping)', async () => {
    // The < 2.10.5 guard in createIngress stays for operators on older servers; tests run the pin.
    expect(versionAtLeast(fx.nc.info?.version ?? '0', '2.10.5')).toBe(true);
    const other = createIngress(
      testConfig(fx.nats, {
        QUEUE_MAX_BYTES: '1000000',
        QUEUE_MAX_PER_RECIPIENT: String(CAP),
      }),
      {
        nc: fx.nc,
        logger: createLogger('ingress-api', 'silent'),
      },
    );
    try {
      await other.start();
    } finally {
      await other.close();
      await ensureQueueStream(fx.jsm, { ...limits, allowShrink: true });
    }
  });

  it('never deletes a queued event by lowering a cap unless told to', async () => {
    const recipient = newRecipient();
    const stream = queueStreamOf(ACCOUNT_A, recipient);
    for (let i = 0; i < 3; i++) expect((await post(notifyBody(recipient))).status).toBe(202);
    const before = (await fx.jsm.streams.info(stream)).state.messages;
    const res = await ensureQueueStream(fx.jsm, { ...limits, maxPerRecipient: 1 });
    expect(res.kept).toEqual(['max_msgs_per_subject']);
    expect((await fx.jsm.streams.info(stream)).state.messages).toBe(before);
  });
});

describe('queue limits', () => {
  it('refuses the event past QUEUE_MAX_PER_RECIPIENT with 507 queue_full and keeps the first ones', async () => {
    const recipient = newRecipient();
    const ids: string[] = [];
    for (let i = 0; i < CAP; i++) {
      const res = await post(notifyBody(recipient, { payload: { n: i } }));
      expect(res.status).toBe(202);
      ids.push(res.json.id);
    }
    const refused = await post(notifyBody(recipient, { payload: { n: CAP } }));
    expect(refused.status).toBe(507);
    expect(refused.json.error).toMatchObject({ code: 'queue_full', field: 'recipient' });
    expect(refused.json.error.message).toContain(`${CAP} queued events`);
    const stored = await queuedMessages(fx.jsm, recipient);
    expect(stored.map((m) => m.header.get(EventHeaders.id))).toEqual(ids);
    expect(stored.map((m) => new TextDecoder().decode(m.data))).toEqual([
      '{"n":0}',
      '{"n":1}',
      '{"n":2}',
    ]);
    // Another recipient is not affected by this one's full queue.
    expect((await post(notifyBody(newRecipient()))).status).toBe(202);
  });

  it('refuses with 507 queue_full when the whole stream is at its byte cap', async () => {
    // The fullest partition: a cap just above it lowers no other partition under its contents.
    const infos = await Promise.all(layout.streams.map((s) => fx.jsm.streams.info(s)));
    const fullest = infos.reduce((a, b) => (b.state.bytes > a.state.bytes ? b : a));
    const stream = fullest.config.name;
    const { state } = fullest;
    await ensureQueueStream(fx.jsm, { ...limits, maxBytes: state.bytes + 200, allowShrink: true });
    try {
      let accepted = 0;
      let res = await post(notifyBody(recipientIn(stream)));
      for (let i = 0; i < 10 && res.status === 202; i++) {
        accepted++;
        res = await post(notifyBody(recipientIn(stream)));
      }
      expect(res.status).toBe(507);
      expect(res.json.error.code).toBe('queue_full');
      expect(res.json.error.message).toContain('QUEUE_MAX_BYTES');
      // At the byte cap the server refused the newest event and dropped none of the older ones.
      const after = (await fx.jsm.streams.info(stream)).state;
      expect(after.messages, JSON.stringify({ state, after, accepted })).toBe(
        state.messages + accepted,
      );
      expect(after.first_seq).toBe(state.first_seq);
    } finally {
      await ensureQueueStream(fx.jsm, limits);
    }
  });
});

describe('when the queue is unavailable', () => {
  it('answers 503 "Failed to send/save notification" and never 202 when the stream is gone', async () => {
    const recipient = newRecipient();
    await fx.jsm.streams.delete(queueStreamOf(ACCOUNT_A, recipient));
    try {
      const ops = `http://127.0.0.1:${fx.opsPort}`;
      const ready = await request(ops, { method: 'GET', path: '/readyz' });
      expect(ready.status).toBe(503);
      expect(ready.json.checks).toEqual({ nats: true, queue_stream: false });
      const res = await post(notifyBody(recipient));
      expect(res.status).toBe(503);
      expect(res.json).toEqual({
        status: DispatchStatus.failed,
        error: { code: 'unavailable', message: expect.stringContaining('retry') },
      });
    } finally {
      expect((await ensureQueueStream(fx.jsm, limits)).change).toBe('created');
    }
    expect((await post(notifyBody(newRecipient()))).status).toBe(202);
  });

  it('refuses to adopt a stream whose retention cannot change in place', async () => {
    await fx.jsm.streams.delete(FIRST);
    const config = {
      ...queueStreamConfig(limits, layout, 0),
      retention: RetentionPolicy.Workqueue,
    } as unknown as StreamConfig;
    await fx.jsm.streams.add(config);
    await expect(ensureQueueStream(fx.jsm, limits)).rejects.toThrow(/retention/);
    await fx.jsm.streams.delete(FIRST);
    expect((await ensureQueueStream(fx.jsm, limits)).change).toBe('created');
  });
});
