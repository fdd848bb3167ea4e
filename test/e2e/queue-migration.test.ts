import { randomUUID } from 'node:crypto';
import { EventHeaders, subjects } from '@herald/proto';
import { LEGACY_QUEUE_STREAM, QueueLayout, queueConsumerName } from '@herald/queue';
import { type ConsumerConfig, headers, connect as natsConnect, type StreamConfig } from 'nats';
import { describe, expect, it } from 'vitest';
import { connect, eventually, newTenant, recipient, useStack } from './fixtures.js';

/**
 * An existing deployment upgrades: its single queue stream `HERALD_QUEUE` (subjects
 * `rt.queue.<account>.<recipient>`) holds queued events, some of them already delivered. The new
 * services start, move every undelivered event into its partition, and a recipient connecting gets
 * all of them, in order, with their ids; nothing delivered comes again; dedup ids still hold.
 */
describe('migration from the single queue stream', () => {
  const stack = useStack();

  it('delivers every event the old stream held after the new services start', async () => {
    const s = stack();
    const tenant = await newTenant(s);
    const layout = new QueueLayout();
    await Promise.all([s.stopService('ingress-api'), s.stopService('socket-edge')]);

    const nc = await natsConnect(s.nats.connectOptions());
    const jsm = await nc.jetstreamManager();
    const js = nc.jetstream();
    // The layout before partitioning, as the previous release created it.
    for (const name of layout.streams) await jsm.streams.delete(name).catch(() => false);
    await jsm.streams.add({
      name: LEGACY_QUEUE_STREAM,
      subjects: [subjects.queueAll],
      retention: 'limits',
      storage: 'file',
      discard: 'new',
      discard_new_per_subject: true,
      max_msgs_per_subject: 100_000,
    } as unknown as StreamConfig);

    const recipients = Array.from({ length: 6 }, recipient);
    const ids = new Map<string, string[]>(recipients.map((r) => [r, []]));
    // Interleaved, as real traffic stores them.
    for (let i = 0; i < 10; i++) {
      for (const r of recipients) {
        const id = randomUUID();
        const h = headers();
        h.set(EventHeaders.id, id);
        h.set(EventHeaders.ts, String(Date.now()));
        await js.publish(subjects.legacyQueue(tenant.account, r), JSON.stringify({ i }), {
          headers: h,
          msgID: `${tenant.account}:${id}`,
          expect: { streamName: LEGACY_QUEUE_STREAM },
        });
        ids.get(r)?.push(id);
      }
    }
    // The first recipient received (and acked) three of theirs before the upgrade.
    const [delivered = '', ...rest] = recipients;
    await jsm.consumers.add(LEGACY_QUEUE_STREAM, {
      durable_name: queueConsumerName(tenant.account, delivered),
      filter_subject: subjects.legacyQueue(tenant.account, delivered),
      ack_policy: 'explicit',
      deliver_policy: 'all',
    } as unknown as ConsumerConfig);
    const old = await js.consumers.get(
      LEGACY_QUEUE_STREAM,
      queueConsumerName(tenant.account, delivered),
    );
    for await (const m of await old.fetch({ max_messages: 3, expires: 2000 })) await m.ackAck();

    await Promise.all([s.startService('ingress-api'), s.startService('socket-edge')]);

    // Gone once emptied: nothing is left behind in it.
    await eventually(
      () =>
        jsm.streams.info(LEGACY_QUEUE_STREAM).then(
          () => false,
          () => true,
        ),
      'the old stream to be emptied and removed',
    );
    for (const r of recipients) {
      const sock = await connect(s, { apiKey: tenant.key.key, recipient: r, v1: true });
      const want = r === delivered ? (ids.get(r) ?? []).slice(3) : (ids.get(r) ?? []);
      await sock.waitForFrames(want.length, 20_000);
      expect(sock.events().map((e) => e.id)).toEqual(want);
      await sock.close();
    }
    expect(rest).toHaveLength(5);

    // The dedup id came along: a retried store of a moved event is recognised as a duplicate.
    const [r0 = ''] = rest;
    const first = ids.get(r0)?.[0] ?? '';
    const again = await js.publish(subjects.queue(tenant.account, r0), JSON.stringify({ i: 0 }), {
      msgID: `${tenant.account}:${first}`,
      expect: { streamName: layout.streamOf(tenant.account, r0) },
    });
    expect(again.duplicate).toBe(true);
    await nc.close();
  }, 120_000);
});
