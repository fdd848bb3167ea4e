import type { Socket } from 'node:net';
import { queueConsumerName, queueStreamOf } from '@herald/queue';
import { openSocket, type Stack, type TestSocket } from '@herald/testkit';
import { connect as natsConnect } from 'nats';
import { describe, expect, it } from 'vitest';
import { eventually, newTenant, notify, recipient, type Tenant, useStack } from './fixtures.js';

// Issue 10, findings A and B, over the whole stack: an event answered 200 or 202 is delivered to
// the recipient at least once, or is still stored. The recipient plays a phone whose network
// silently died: its socket opens, then reads nothing more (no events, no pings), then drops.

/** A socket whose TCP connection stops reading as soon as the WebSocket is open. */
async function openNeverReading(
  s: Stack,
  tenant: Tenant,
  to: string,
  v1: boolean,
): Promise<TestSocket> {
  const sock = openSocket(s.wsUrl, s.ca, {
    apiKey: tenant.key.key,
    recipient: to,
    v1,
    autoAck: false,
  });
  let tcp: Socket | undefined;
  // ws resumes the socket when it takes it over after the upgrade: pause it on open.
  sock.ws.once('upgrade', (res) => {
    tcp = res.socket as Socket;
  });
  sock.ws.once('open', () => tcp?.pause());
  await sock.opened;
  return sock;
}

const distinct = (values: unknown[]) => new Set(values).size;

describe('the delivery guarantee', () => {
  const stack = useStack();

  it('delivers every one of 2,000 events answered 202 after a never-reading plain client dropped', async () => {
    const s = stack();
    const tenant = await newTenant(s);
    const to = recipient();
    const COUNT = 2000;
    const pad = 'x'.repeat(1024);
    for (let n = 0; n < COUNT; n++) {
      const res = await notify(s, tenant, to, { n, pad });
      expect(res.status).toBe(202);
    }
    const silent = await openNeverReading(s, tenant, to, false);
    // The edge drains into the silent socket (its kernel buffers take the frames) until the
    // recipient's consumer has events out: only then does the drop test anything.
    const nc = await natsConnect(s.nats.connectOptions());
    try {
      const jsm = await nc.jetstreamManager();
      await eventually(async () => {
        const info = await jsm.consumers
          .info(queueStreamOf(tenant.account, to), queueConsumerName(tenant.account, to))
          .catch(() => undefined);
        return (info?.delivered.stream_seq ?? 0) > 0;
      }, 'the drain to write to the silent socket');
    } finally {
      await nc.close();
    }
    await silent.drop();

    const reader = openSocket(s.wsUrl, s.ca, { apiKey: tenant.key.key, recipient: to });
    await reader.opened;
    const seen = () => reader.frames.map((f) => (JSON.parse(f.text) as { n: number }).n);
    await eventually(() => distinct(seen()) >= COUNT, 'every event on the reconnect', 60_000);
    const received = seen();
    console.info(
      `e2e finding A: ${distinct(received)}/${COUNT} events answered 202 arrived after the reconnect, ${received.length - distinct(received)} duplicates`,
    );
    expect(distinct(received)).toBe(COUNT);
    await reader.close();
  }, 180_000);

  it('answers 202, not 200, for events a never-reading herald.v1 client was written, and delivers every one after the edge is killed (kill -9)', async () => {
    const s = stack();
    const tenant = await newTenant(s);
    const to = recipient();
    const COUNT = 200;
    const silent = await openNeverReading(s, tenant, to, true);
    // Written to a socket that proves nothing: no edge answers "sent", so ingress queues each one
    // once LIVE_TIMEOUT_MS has passed and answers 202. A 200 here would be a promise that the
    // kill below breaks: the edge held the only copy.
    const answers: Array<{ status: number; body: { id: string } }> = [];
    for (let n = 0; n < COUNT; n += 50) {
      answers.push(
        ...(await Promise.all(
          Array.from({ length: 50 }, (_, k) => notify(s, tenant, to, { n: n + k })),
        )),
      );
    }
    expect(answers.map((a) => a.status)).toEqual(Array.from({ length: COUNT }, () => 202));
    const ids = answers.map((a) => a.body.id);
    await s.stopService('socket-edge', 'SIGKILL');
    silent.ws.terminate();
    await s.startService('socket-edge');

    const reader = openSocket(s.wsUrl, s.ca, { apiKey: tenant.key.key, recipient: to, v1: true });
    await reader.opened;
    await eventually(
      () => distinct(reader.events().map((e) => e.id)) >= COUNT,
      'every event on the reconnect',
      60_000,
    );
    const received = reader.events().map((e) => e.id);
    console.info(
      `e2e finding B: ${distinct(received)}/${COUNT} events answered 202 delivered after kill -9 of the edge, ${received.length - distinct(received)} duplicates`,
    );
    expect(new Set(received)).toEqual(new Set(ids));
    await reader.close();
  }, 180_000);
});
