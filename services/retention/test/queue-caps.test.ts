import { createLogger } from '@herald/kit';
import { JsErrCode, JsErrDescription } from '@herald/nats';
import { ensureQueueStream, queueStreamConfig, queueStreamOf } from '@herald/queue';
import { connect, type NatsConnection, type StreamConfig } from 'nats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadRunOnceConfig } from '../src/config.js';
import { createRetention } from '../src/index.js';
import { EdgeSim } from './support/edge-sim.js';
import { startNatsWithStoreLimit } from './support/nats-with-store-limit.js';
import {
  deleteQueueStreams,
  deliver,
  dispatch,
  dispatchMany,
  layout,
  queueState,
  storedIds,
  uuid,
  uuidBeside,
} from './support/queue-fixture.js';
import { type RetentionFixture, startRetentionFixture } from './support/retention-fixture.js';

function apiError(err: unknown): { err_code?: number; description?: string } | undefined {
  return (err as { api_error?: { err_code?: number; description?: string } }).api_error;
}

async function refusal(p: Promise<unknown>) {
  try {
    await p;
  } catch (err) {
    return apiError(err);
  }
  throw new Error('the dispatch was accepted');
}

describe('per-recipient cap (max_msgs_per_subject, discard new per subject)', () => {
  let f: RetentionFixture;
  beforeAll(async () => {
    f = await startRetentionFixture();
    // The stream as ingress creates it, with QUEUE_MAX_PER_RECIPIENT=5.
    await deleteQueueStreams(f.jsm);
    await ensureQueueStream(f.jsm, { maxPerRecipient: 5 });
  });
  afterAll(async () => {
    await f?.close();
  });

  it('refuses the dispatch over the cap, drops nothing, and frees room only once retention purged delivered events', async () => {
    const [a, r, other] = [uuid(), uuid(), uuid()];
    const ids = await dispatchMany(f.nc, a, r, 5);
    // What ingress maps to 507 queue_full (@herald/nats's isRecipientFull: JsErrCode.StreamStoreFailed + its description).
    expect(await refusal(dispatch(f.nc, a, r))).toEqual({
      code: 503,
      err_code: JsErrCode.StreamStoreFailed,
      description: JsErrDescription.MaxMsgsPerSubject,
    });
    expect(await storedIds(f.jsm, a, r)).toEqual(ids);
    await dispatch(f.nc, a, other); // another recipient is not affected

    const edge = new EdgeSim(f.nc, f.jsm, a, r);
    edge.connect();
    await edge.waitFor(5);
    await edge.disconnect();
    expect(edge.delivered).toEqual(ids);

    // Delivered events still count against the cap until retention deletes them.
    await refusal(dispatch(f.nc, a, r));
    expect(await f.retention().runOnce()).toMatchObject({ events_purged: 5 });
    const later = await dispatchMany(f.nc, a, r, 5);
    expect(await storedIds(f.jsm, a, r)).toEqual(later);
  });
});

describe('stream-wide event cap (max_msgs, discard new)', () => {
  let f: RetentionFixture;
  beforeAll(async () => {
    f = await startRetentionFixture();
    await deleteQueueStreams(f.jsm);
    // A stream-wide event cap on every partition: refuses exactly on every server version.
    for (let p = 0; p < layout.partitions; p++) {
      await f.jsm.streams.add({
        ...(queueStreamConfig({}, layout, p) as unknown as StreamConfig),
        max_msgs: 12,
      });
    }
  });
  afterAll(async () => {
    await f?.close();
  });

  it('refuses the dispatch over the cap, keeps every earlier event, and accepts again after a run', async () => {
    const a = uuid();
    // Both in one partition stream: the cap is per stream.
    const r1 = uuid();
    const r2 = uuidBeside(a, r1);
    const first = await dispatchMany(f.nc, a, r1, 6);
    const second = await dispatchMany(f.nc, a, r2, 6);
    // ingress maps this (10077 + "maximum messages exceeded") to 507 queue_full.
    expect(await refusal(dispatch(f.nc, a, r2))).toEqual({
      code: 503,
      err_code: JsErrCode.StreamStoreFailed,
      description: 'maximum messages exceeded',
    });
    expect(await storedIds(f.jsm, a, r1)).toEqual(first);
    expect(await storedIds(f.jsm, a, r2)).toEqual(second);

    await deliver(f.nc, f.jsm, a, r1, 6);
    expect(await f.retention().runOnce()).toMatchObject({ events_purged: 6, consumers_reaped: 1 });
    await dispatchMany(f.nc, a, r2, 6);
    expect((await f.jsm.streams.info(queueStreamOf(a, r1))).state.messages).toBe(12);
  });
});

describe('store-wide byte bound (jetstream max_file_store)', () => {
  let server: Awaited<ReturnType<typeof startNatsWithStoreLimit>>;
  let nc: NatsConnection;
  beforeAll(async () => {
    server = await startNatsWithStoreLimit(64 * 1024);
    nc = await connect(server.connectOptions());
  });
  afterAll(async () => {
    await nc?.close();
    await server?.stop();
  });

  it('refuses the dispatch that does not fit, keeps every earlier event, and accepts again after a run', async () => {
    const jsm = await nc.jetstreamManager();
    await ensureQueueStream(jsm, {});
    const a = uuid();
    const recipients = Array.from({ length: 8 }, () => uuid());
    const accepted: string[] = [];
    let refused: ReturnType<typeof apiError>;
    const body = JSON.stringify({ pad: 'x'.repeat(400) });
    for (let i = 0; i < 1000 && !refused; i++) {
      try {
        accepted.push(await dispatch(nc, a, recipients[i % recipients.length] ?? a, body));
      } catch (err) {
        refused = apiError(err);
      }
    }
    // ingress maps this (10023) to 507 queue_full.
    expect(refused).toMatchObject({
      err_code: JsErrCode.InsufficientResources,
      description: 'insufficient resources',
    });
    const info = await queueState(jsm);
    expect(info.first_seqs.every((seq) => seq === 1)).toBe(true);
    expect(info.messages).toBe(accepted.length);

    const [r0 = ''] = recipients;
    const mine = (await storedIds(jsm, a, r0)).length;
    await deliver(nc, jsm, a, r0, mine);
    const retention = createRetention(
      loadRunOnceConfig({ ...server.env('retention'), LOG_LEVEL: 'silent' }),
      {
        nc,
        logger: createLogger('retention', 'silent'),
      },
    );
    // Its lock bucket lives in memory storage, so a full file store does not stop the run.
    expect(await retention.runOnce()).toMatchObject({
      outcome: 'completed',
      events_purged: mine,
      consumers_reaped: 1,
    });
    await retention.close();
    expect((await queueState(jsm)).messages).toBe(accepted.length - mine);
    // Deleted event by event, the room is credited back to the store (2.9.10 does not credit a purge).
    await dispatch(nc, a, r0, body);
  });
});
