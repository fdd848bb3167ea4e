import { HeraldError, QueueAckFloor } from '@herald/proto';
import { test } from '@herald/testkit/fixtures';
import { connect, type NatsConnection } from 'nats';
import { describe, expect, it } from 'vitest';
import { jsApi } from '../src/jetstream-api.js';
import { ensureRecordBucket, KvRecords } from '../src/kv-records.js';
import { NatsRequester } from '../src/nats-requester.js';
import { useCorePair } from './core-pair.js';

/** A JetStream test: the file's nats-server (the test kit's fixture), a connection of its own. */
const jsTest = (name: string, body: (nc: NatsConnection) => Promise<void>) =>
  test(name, async ({ nats }) => {
    const nc = await connect(nats.connectOptions());
    try {
      await body(nc);
    } finally {
      await nc.close();
    }
  });

const DAY_MS = 86_400_000;
const floor = (seq: number, id = `e${seq}`) => ({ v: 1 as const, stream: 'S', seq, id });

describe('KvRecords (a real nats-server with JetStream)', () => {
  jsTest(
    'reads nothing and refuses to write, as unavailable, while the bucket does not exist',
    async (nc) => {
      const records = new KvRecords(nc, 'kvr_missing', QueueAckFloor, { timeoutMs: 2000 });
      expect(await records.read('a.b')).toBeUndefined();
      const err = await records.put('a.b', floor(1)).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(HeraldError);
      expect(err).toMatchObject({ code: 'unavailable', cause: 'nobody subscribes' });
    },
  );

  jsTest(
    'makes the bucket once (file, history 1, direct gets, the TTL) and leaves an existing one as it is',
    async (nc) => {
      await ensureRecordBucket(nc.jetstream(), 'kvr_made', { ttlMs: 7 * DAY_MS });
      const jsm = await nc.jetstreamManager();
      const made = await jsm.streams.info('KV_kvr_made');
      expect(made.config).toMatchObject({
        storage: 'file',
        max_msgs_per_subject: 1,
        max_age: 7 * DAY_MS * 1_000_000,
        allow_direct: true,
        num_replicas: 1,
      });
      await ensureRecordBucket(nc.jetstream(), 'kvr_made', { ttlMs: 30 * DAY_MS });
      expect((await jsm.streams.info('KV_kvr_made')).config.max_age).toBe(7 * DAY_MS * 1_000_000);
    },
  );

  jsTest(
    'keeps the last record per key, reads a value that is not one or a deleted key as none, and lists its keys',
    async (nc) => {
      await ensureRecordBucket(nc.jetstream(), 'kvr_floors', { ttlMs: DAY_MS });
      const records = new KvRecords(nc, 'kvr_floors', QueueAckFloor, {
        timeoutMs: 2000,
        requester: new NatsRequester(nc),
      });
      expect(await records.read('a.none')).toBeUndefined();
      await records.put('a.one', floor(3));
      await records.put('a.one', floor(9));
      expect(await records.read('a.one')).toEqual(floor(9));
      // A record the schema refuses is never written.
      await expect(records.put('a.one', floor(0))).rejects.toBeInstanceOf(RangeError);
      expect(await records.read('a.one')).toEqual(floor(9));

      const kv = await nc.jetstream().views.kv('kvr_floors', { bindOnly: true });
      await kv.put('a.garbled', '{"v":1,"stream":"S","seq":"nine"}');
      expect(await records.read('a.garbled')).toBeUndefined();
      await kv.put('a.garbled', 'not json');
      expect(await records.read('a.garbled')).toBeUndefined();
      await records.put('a.deleted', floor(4));
      await kv.delete('a.deleted');
      expect(await records.read('a.deleted')).toBeUndefined();

      const keys: string[] = [];
      for await (const key of await records.keys()) keys.push(key);
      expect(keys.sort()).toEqual(['a.garbled', 'a.one']);
    },
  );
});

describe('KvRecords and jsApi when JetStream does not answer (a core nats-server)', () => {
  const pair = useCorePair();

  it('reads a bucket nobody serves as empty, and a silent one, like a silent write, as unavailable', async () => {
    const records = new KvRecords(pair.nc, 'kvr_silent', QueueAckFloor, { timeoutMs: 150 });
    expect(await records.read('a.b')).toBeUndefined();
    const silent = pair.peer.subscribe('$JS.API.DIRECT.GET.KV_kvr_silent.>');
    const silentPut = pair.peer.subscribe('$KV.kvr_silent.>');
    await pair.peer.flush();
    for (const call of [records.read('a.b'), records.put('a.b', floor(1))]) {
      const err = await call.catch((e: unknown) => e);
      expect(err).toBeInstanceOf(HeraldError);
      expect(err).toMatchObject({ code: 'unavailable', cause: 'no reply within 150 ms' });
    }
    silent.unsubscribe();
    silentPut.unsubscribe();
  });

  it('reads a JetStream API call without JetStream as unavailable (jsApi)', async () => {
    const err = await jsApi(
      new NatsRequester(pair.nc),
      '$JS.API.CONSUMER.INFO.S.c',
      new Uint8Array(0),
      2000,
    ).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(HeraldError);
    expect(err).toMatchObject({ code: 'unavailable', cause: 'nobody subscribes' });
  });
});

describe('jsApi (a real nats-server with JetStream)', () => {
  jsTest(
    'answers the JSON, undefined for a 404, and unavailable for another JetStream error',
    async (nc) => {
      const requester = new NatsRequester(nc);
      const jsm = await nc.jetstreamManager();
      await jsm.streams.add({ name: 'JSAPI_T', subjects: ['jsapi.t.>'] });
      await jsm.consumers.add('JSAPI_T', { durable_name: 'c' });
      const empty = new Uint8Array(0);
      const info = await jsApi<{ name?: string }>(
        requester,
        '$JS.API.CONSUMER.INFO.JSAPI_T.c',
        empty,
        2000,
      );
      expect(info?.name).toBe('c');
      expect(
        await jsApi(requester, '$JS.API.CONSUMER.INFO.JSAPI_T.none', empty, 2000),
      ).toBeUndefined();
      const bad = await jsApi(
        requester,
        '$JS.API.STREAM.MSG.GET.JSAPI_T',
        new TextEncoder().encode('{"nonsense":true}'),
        2000,
      ).catch((e: unknown) => e);
      expect(bad).toBeInstanceOf(HeraldError);
      expect(bad).toMatchObject({ code: 'unavailable' });
      expect(String((bad as HeraldError).cause)).toMatch(/^JetStream: /);
    },
  );
});
