import { EventHeaders } from '@herald/proto';
import { QueueLayout } from '@herald/queue';
import { post, type TestSocket } from '@herald/testkit';
import { connect as natsConnect } from 'nats';
import { describe, expect, it } from 'vitest';
import { connect, eventually, newTenant, recipient, sleep, useStack } from './fixtures.js';

/**
 * kill -9 of the socket-edge and of ingress in the middle of traffic: every event that got a 202
 * is delivered once the recipients reconnect, and no event that got a 200 was stored.
 */
describe('crash and restart', () => {
  const stack = useStack();

  it('delivers every 202 after kill -9 of edge and ingress, and stores no 200', async () => {
    const s = stack();
    const tenant = await newTenant(s);
    const recipients = Array.from({ length: 8 }, recipient);
    const onlineSet = new Set(recipients.slice(0, 4));
    let sockets: TestSocket[] = await Promise.all(
      [...onlineSet].map((r) => connect(s, { apiKey: tenant.key.key, recipient: r, v1: true })),
    );
    const sent = new Set<string>();
    const queued = new Map<string, string>(); // id → recipient
    let stop = false;
    let n = 0;
    const traffic = (async () => {
      while (!stop && n < 5000) {
        const to = recipients[n % recipients.length] as string;
        n++;
        try {
          const res = await post(s.baseUrl, s.ca, {
            recipient: to,
            payload: { n },
            api_key: tenant.key.key,
            client: 'mobile',
          });
          if (res.status === 200) sent.add(res.body.id);
          else if (res.status === 202) queued.set(res.body.id, to);
        } catch {
          // Ingress is down: the sender got no answer, so nothing was promised.
          await sleep(20);
        }
      }
    })();

    await eventually(() => sent.size + queued.size > 40, 'traffic flowing');
    await s.stopService('socket-edge', 'SIGKILL');
    await eventually(() => queued.size > 20, 'events queued while the edge is down');
    await s.stopService('ingress-api', 'SIGKILL');
    await sleep(200);
    await Promise.all([s.startService('socket-edge'), s.startService('ingress-api')]);
    const mark = sent.size + queued.size;
    await eventually(() => sent.size + queued.size > mark + 40, 'traffic flowing again');
    // Reconnect the online recipients mid-traffic so live pushes resume too.
    for (const sock of sockets) sock.ws.terminate();
    sockets = await Promise.all(
      [...onlineSet].map((r) => connect(s, { apiKey: tenant.key.key, recipient: r, v1: true })),
    );
    const mark2 = sent.size;
    await eventually(() => sent.size > mark2 + 10, 'live pushes after the restart');
    stop = true;
    await traffic;

    // Every recipient connects (the online ones again) and must receive all of its 202s.
    const all = await Promise.all(
      recipients.map((r) => connect(s, { apiKey: tenant.key.key, recipient: r, v1: true })),
    );
    const received = new Set<string>();
    await eventually(
      () => {
        for (const sock of [...all, ...sockets]) for (const e of sock.events()) received.add(e.id);
        return [...queued.keys()].every((id) => received.has(id));
      },
      `all ${queued.size} queued events delivered`,
      30_000,
    );
    expect(queued.size).toBeGreaterThan(20);
    expect(sent.size).toBeGreaterThan(10);

    // No event answered 200 is in the offline queue.
    const nc = await natsConnect(s.nats.connectOptions());
    const js = nc.jetstream();
    const storedIds = new Set<string>();
    for (const stream of new QueueLayout().streams) {
      const consumer = await js.consumers.get(stream); // ordered consumer over the whole partition
      const info = await (await nc.jetstreamManager()).streams.info(stream);
      if (info.state.messages === 0) continue;
      const iter = await consumer.fetch({ max_messages: info.state.messages, expires: 5000 });
      for await (const m of iter) {
        const id = m.headers?.get(EventHeaders.id);
        if (id) storedIds.add(id);
        if (m.info.pending === 0) break;
      }
    }
    const storedSent = [...sent].filter((id) => storedIds.has(id));
    expect(storedSent).toEqual([]);
    await nc.close();
    await Promise.all([...all, ...sockets].map((x) => x.close()));
  }, 120_000);
});
