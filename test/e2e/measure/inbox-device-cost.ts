// Measurement (docs/architecture-history.md, "Inbox mode: on the socket"); run from the repository
// root with
//   N=200 ROUNDS=5 node --conditions=herald-source --import tsx test/e2e/measure/inbox-device-cost.ts
// On the whole stack (auth, ingress, one edge, the status service's inbox store; real nats-server
// and Postgres): for a key without inbox mode and an inbox key side by side, the time from a
// device's connect to its N-th event queued while the recipient was offline (first device: the
// queue's drain and the device's catch-up at once; second device: the catch-up alone), and the
// time of a live /notify answered 200 to one connected socket with and without a device (an
// inbox key's /notify first keeps the event in the store; an inbox device socket then reads the
// store once per kept event, and the live event waits for that read). Same run: read the ratios.
import { randomUUID } from 'node:crypto';
import { post, startStack, type TestSocket } from '@herald/testkit';
import { eventually, newTenant, notify, recipient, type Tenant } from '../fixtures.js';
import { inboxTenant, v1Socket } from '../inbox-fixtures.js';

const N = Number(process.env.N ?? 200);
const ROUNDS = Number(process.env.ROUNDS ?? 5);
const LIVE = Number(process.env.LIVE ?? 50);

const stack = await startStack({ services: ['auth', 'ingress-api', 'socket-edge', 'status'] });
try {
  const plain = await newTenant(stack);
  const inbox = await inboxTenant(stack);

  const queueN = async (tenant: Tenant, to: string) => {
    const events = Array.from({ length: N }, (_, n) => ({ recipient: to, payload: { n } }));
    for (let i = 0; i < events.length; i += 100) {
      const res = await post(
        stack.baseUrl,
        stack.ca,
        { api_key: tenant.key.key, client: 'mobile', events: events.slice(i, i + 100) },
        { path: '/notify/batch' },
      );
      if (res.status !== 200) throw new Error(`batch: ${res.status} ${JSON.stringify(res.body)}`);
    }
  };
  const timeToAll = async (tenant: Tenant, to: string, device: string) => {
    const t0 = performance.now();
    const socket = await v1Socket(stack, tenant.key, to, { device });
    await eventually(() => socket.events().length >= N, `${N} events`, 60_000);
    const ms = performance.now() - t0;
    if (socket.events().length !== N) throw new Error(`${socket.events().length} events, not ${N}`);
    await socket.close();
    return ms;
  };
  const liveTimes = async (tenant: Tenant, socket: TestSocket, to: string) => {
    const times: number[] = [];
    for (let n = 0; n < LIVE; n++) {
      const t0 = performance.now();
      const res = await notify(stack, tenant, to, { n });
      if (res.status !== 200) throw new Error(`live: ${res.status}`);
      times.push(performance.now() - t0);
    }
    await eventually(() => socket.events().length >= LIVE, 'every live event');
    return median(times);
  };

  const rows: Record<string, number[]> = {
    'plain key, first device': [],
    'plain key, second device': [],
    'inbox key, first device': [],
    'inbox key, second device': [],
    'plain key, live /notify to a device': [],
    'inbox key, live /notify to a device': [],
    'plain key, live /notify, no device': [],
    'inbox key, live /notify, no device': [],
  };
  for (let r = 0; r < ROUNDS; r++) {
    for (const [name, tenant] of [
      ['plain key', plain],
      ['inbox key', inbox],
    ] as const) {
      const to = recipient();
      await queueN(tenant, to);
      rows[`${name}, first device`]?.push(await timeToAll(tenant, to, 'phone'));
      rows[`${name}, second device`]?.push(await timeToAll(tenant, to, 'laptop'));
      const live = recipient();
      const socket = await v1Socket(stack, tenant.key, live, { device: randomUUID() });
      rows[`${name}, live /notify to a device`]?.push(await liveTimes(tenant, socket, live));
      await socket.close();
      const bare = recipient();
      const noDevice = await v1Socket(stack, tenant.key, bare);
      rows[`${name}, live /notify, no device`]?.push(await liveTimes(tenant, noDevice, bare));
      await noDevice.close();
    }
  }
  console.log(`median of ${ROUNDS} rounds, ms (ratio to the plain key's row):`);
  for (const [name, xs] of Object.entries(rows)) {
    const base = median(rows[name.replace('inbox key', 'plain key')] ?? xs);
    console.log(
      `  ${name.padEnd(40)} ${median(xs).toFixed(1).padStart(8)}  ${(median(xs) / base).toFixed(2)}`,
    );
  }
} finally {
  await stack.stop();
}

function median(xs: number[]): number {
  return [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)] ?? 0;
}
