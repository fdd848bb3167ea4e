import { DiscardPolicy, headers, type JetStreamClient, type JetStreamManager } from 'nats';
import { pull, sleep, stream } from './helpers.js';

/* The NATS behaviours Herald's code relies on, each checked on the pinned server: yes or no. */

/** Does a purge below the ack floor keep the consumer's ack-pending messages (2.9.10 lost them)? */
export async function purgeKeepsAckPending(jsm: JetStreamManager, js: JetStreamClient) {
  await stream(jsm, 'PURGE');
  for (let i = 1; i <= 6; i++) await js.publish('PURGE.r', new TextEncoder().encode(String(i)));
  await jsm.consumers.add('PURGE', pull('p', 'PURGE.r'));
  const consumer = await js.consumers.get('PURGE', 'p');
  const got = await consumer.fetch({ max_messages: 4, expires: 2000 });
  const msgs = [];
  for await (const m of got) msgs.push(m);
  // Ack 1 and 2: the floor is 2; 3 and 4 stay ack-pending.
  for (const m of msgs.slice(0, 2)) await m.ackAck();
  const info = await jsm.consumers.info('PURGE', 'p');
  await jsm.streams.purge('PURGE', { filter: 'PURGE.r', seq: info.ack_floor.stream_seq + 1 });
  for (const m of msgs.slice(2)) m.nak();
  const again = await consumer.fetch({ max_messages: 4, expires: 3000 });
  const seen: number[] = [];
  for await (const m of again) {
    seen.push(m.seq);
    m.ack();
  }
  return {
    ack_floor_before: info.ack_floor.stream_seq,
    redelivered_after_purge: seen,
    keeps_ack_pending: seen.includes(3) && seen.includes(4),
  };
}

/** Is a durable with unacked messages reaped by inactive_threshold? */
export async function inactiveThresholdReaps(jsm: JetStreamManager, js: JetStreamClient) {
  await stream(jsm, 'IDLE');
  await js.publish('IDLE.r', new Uint8Array(1));
  await jsm.consumers.add('IDLE', pull('i', 'IDLE.r', { inactive_threshold: 1_000_000_000 }));
  const consumer = await js.consumers.get('IDLE', 'i');
  for await (const _ of await consumer.fetch({ max_messages: 1, expires: 1000 })) {
    // leave it unacked
  }
  await sleep(4000);
  const exists = await jsm.consumers.info('IDLE', 'i').then(
    () => true,
    () => false,
  );
  return { reaped_with_unacked_messages: !exists };
}

/** How many messages consume() pulls ahead with max_messages 10 before any ack. */
export async function consumePrefetch(jsm: JetStreamManager, js: JetStreamClient) {
  await stream(jsm, 'PRE');
  for (let i = 0; i < 100; i++) await js.publish('PRE.r', new Uint8Array(8));
  // A long ack_wait, so what is counted is the pull-ahead, not redeliveries.
  await jsm.consumers.add('PRE', pull('f', 'PRE.r', { ack_wait: 30_000_000_000 }));
  const consumer = await js.consumers.get('PRE', 'f');
  const messages = await consumer.consume({ max_messages: 10 });
  let delivered = 0;
  const done = (async () => {
    for await (const _ of messages) delivered++;
  })();
  await sleep(1500);
  const info = await jsm.consumers.info('PRE', 'f');
  await messages.close();
  await done;
  return { max_messages: 10, delivered_without_ack: delivered, ack_pending: info.num_ack_pending };
}

export async function discardNewPerSubject(jsm: JetStreamManager, js: JetStreamClient) {
  await stream(jsm, 'CAP', {
    max_msgs_per_subject: 2,
    discard: DiscardPolicy.New,
    discard_new_per_subject: true,
  });
  await js.publish('CAP.r', new Uint8Array(1));
  await js.publish('CAP.r', new Uint8Array(1));
  const err = await js.publish('CAP.r', new Uint8Array(1)).then(
    () => undefined,
    (e: { api_error?: { err_code?: number }; code?: string; message?: string }) => e,
  );
  return {
    third_publish_refused: err !== undefined,
    err_code: err?.api_error?.err_code ?? err?.code,
  };
}

export async function msgIdDedup(jsm: JetStreamManager, js: JetStreamClient) {
  await stream(jsm, 'DUP');
  const a = await js.publish('DUP.r', new Uint8Array(1), { msgID: 'acct:k1' });
  const b = await js.publish('DUP.r', new Uint8Array(1), { msgID: 'acct:k1' });
  const info = await jsm.streams.info('DUP');
  return {
    second_is_duplicate: b.duplicate,
    same_seq: a.seq === b.seq,
    window_s: info.config.duplicate_window / 1e9,
  };
}

/** Per-message TTL (server >= 2.11 with allow_msg_ttl): what per-key KV expiry can build on. */
export async function perMessageTtl(jsm: JetStreamManager, js: JetStreamClient) {
  try {
    await stream(jsm, 'TTL', { allow_msg_ttl: true });
  } catch (err) {
    return { supported: false, error: String(err) };
  }
  const h = headers();
  h.set('Nats-TTL', '1s');
  await js.publish('TTL.r', new Uint8Array(1), { headers: h });
  await js.publish('TTL.keep', new Uint8Array(1));
  await sleep(2500);
  const info = await jsm.streams.info('TTL');
  return { supported: true, messages_left_after_ttl: info.state.messages };
}
