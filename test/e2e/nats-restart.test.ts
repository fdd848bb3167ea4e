import type { TestSocket } from '@herald/testkit';
import { describe, expect, it } from 'vitest';
import { connect, eventually, newTenant, notify, recipient, useStack } from './fixtures.js';

/**
 * NATS stops under dispatch load and comes back on the same store (a broker restart). Meanwhile
 * ingress answers 503 only: never a 200 or 202 it could not honour. Afterwards it serves again by
 * itself, and every event it answered 200 or 202 for reaches its recipient.
 */
describe('NATS restart', () => {
  const stack = useStack();

  it('answers 503 while NATS is down, never a false 200/202, and loses nothing it accepted', async () => {
    const s = stack();
    const tenant = await newTenant(s);
    const online = recipient();
    const offline = recipient();
    const sockets: TestSocket[] = [
      await connect(s, { apiKey: tenant.key.key, recipient: online, v1: true }),
    ];
    const sent = new Map<string, string>();
    const queued = new Map<string, string>();
    const duringOutage: number[] = [];
    let down = false;
    let stop = false;
    let n = 0;
    const load = Promise.all(
      [online, offline].map(async (to) => {
        while (!stop) {
          const during = down;
          const res = await notify(s, tenant, to, { n: n++ }).catch(() => undefined);
          if (!res) continue;
          if (res.status === 200) sent.set(res.body.id, to);
          if (res.status === 202) queued.set(res.body.id, to);
          if (during && down) duringOutage.push(res.status);
        }
      }),
    );
    try {
      await eventually(() => sent.size >= 5 && queued.size >= 5, 'traffic flowing', 30_000);
      await s.nats.stop({ keepStore: true });
      down = true;
      await eventually(() => duringOutage.length >= 6, 'dispatches while NATS is down', 90_000);
      down = false;
      await s.nats.restart();
      const mark = queued.size;
      await eventually(() => queued.size >= mark + 5, 'dispatches stored again', 60_000);
    } finally {
      stop = true;
      await load;
    }
    expect(new Set(duringOutage)).toEqual(new Set([503]));

    // Every accepted event arrives: live ones on the open socket, stored ones on (re)connect.
    sockets.push(
      await connect(s, { apiKey: tenant.key.key, recipient: online, v1: true }),
      await connect(s, { apiKey: tenant.key.key, recipient: offline, v1: true }),
    );
    const received = new Set<string>();
    await eventually(
      () => {
        for (const sock of sockets) for (const e of sock.events()) received.add(String(e.id));
        return [...sent.keys(), ...queued.keys()].every((id) => received.has(id));
      },
      `all ${sent.size} sent and ${queued.size} stored events received`,
      60_000,
    );
    await Promise.all(sockets.map((x) => x.close()));
  }, 240_000);
});
