import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { get, type HttpResult, openSocket, post, type TestSocket } from '@herald/testkit';
import { type ComposeStack, composeStackFromEnv, run } from '@herald/testkit/compose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from '../e2e/fixtures.js';
import { WebhookReceiver } from './webhook-receiver.js';

// The docker compose stack (deploy/docker-compose.yml) as real containers, started by
// scripts/test-deploy.sh through `make compose-up`. Every request goes to the ports the stack
// publishes on 127.0.0.1; the containers talk to each other only on the stack's own networks.

/** The most any container may take to become healthy after a start or restart. */
const HEALTHY_LIMIT_MS = 120_000;
/** The Herald services, as compose names them. */
const HERALD_SERVICES = ['auth', 'ingress-api', 'socket-edge', 'retention', 'status'];

let stack: ComposeStack;

beforeAll(() => {
  stack = composeStackFromEnv();
});

const notify = (to: string, payload: unknown): Promise<HttpResult> => {
  const demo = stack.demo();
  return post(demo.baseUrl, stack.ca, {
    recipient: to,
    payload,
    api_key: demo.testKey,
    client: 'mobile',
  });
};

function connect(to: string, v1 = false): TestSocket {
  const demo = stack.demo();
  return openSocket(demo.wsUrl, stack.ca, {
    apiKey: demo.testKey,
    recipient: to,
    client: 'mobile',
    v1,
  });
}

/** Queues `count` events for an offline recipient; every one must be answered 202. */
async function queue(to: string, count: number, tag: string): Promise<void> {
  for (let n = 0; n < count; n++) {
    const res = await notify(to, { tag, n });
    expect(res.status, res.text).toBe(202);
  }
}

/** Connects `to` and waits for the `count` events queued under `tag` (plain framing). */
async function receiveQueued(to: string, count: number, tag: string): Promise<void> {
  const sock = connect(to);
  try {
    await sock.opened;
    const seen = () =>
      new Set(
        sock.frames
          .map((f) => JSON.parse(f.text) as { tag?: string; n?: number })
          .filter((p) => p.tag === tag)
          .map((p) => p.n),
      );
    await eventually(() => seen().size >= count, `${count} queued events (${tag})`, 60_000);
    expect([...seen()].sort((a, b) => Number(a) - Number(b))).toEqual(
      Array.from({ length: count }, (_, n) => n),
    );
  } finally {
    await sock.close();
  }
}

/** Ingress answers once its NATS connection and streams are back (after a restart). */
async function ingressReady(): Promise<void> {
  const demo = stack.demo();
  await eventually(
    async () =>
      (await get(demo.baseUrl, stack.ca, '/readyz').catch(() => undefined))?.status === 200,
    'ingress-api /readyz on its published port',
    HEALTHY_LIMIT_MS,
  );
}

async function composeOk(...args: string[]): Promise<string> {
  const res = await stack.compose(...args);
  expect(res.code, `scripts/compose.sh ${args.join(' ')}\n${res.stderr}`).toBe(0);
  return res.stdout;
}

describe('the docker compose stack', () => {
  it('has every container healthy, and publishes only ingress, socket-edge and the dashboard, on 127.0.0.1', async () => {
    const took = await stack.waitHealthy(HEALTHY_LIMIT_MS);
    const containers = await stack.containers();
    // scripts/test-deploy.sh runs the dev profile too: the Daraja simulator.
    const profiles = (process.env.COMPOSE_PROFILES ?? '').split(',');
    expect(containers.map((c) => c.service).sort()).toEqual(
      [
        'nats',
        'postgres',
        ...HERALD_SERVICES,
        ...(profiles.includes('dev') ? ['daraja-sim'] : []),
      ].sort(),
    );
    const published = containers
      .flatMap((c) => c.publishers.map((p) => `${c.service}:${p.url}:${p.targetPort}`))
      .sort();
    expect(published).toEqual([
      'auth:127.0.0.1:8445',
      'ingress-api:127.0.0.1:8443',
      'socket-edge:127.0.0.1:8444',
    ]);
    console.info(`deploy: every container healthy ${took} ms after the check began`);
    // For docs/operations.md's sizing: what each container holds at rest.
    const stats = await run('docker', [
      'stats',
      '--no-stream',
      '--format',
      '{{.Name}} {{.MemUsage}} {{.CPUPerc}}',
      ...containers.map((c) => c.name),
    ]);
    console.info(`deploy: at rest:\n${stats.stdout.trim()}`);
  });

  it('serves the quickstart: 202 while offline, the queued event on connect, then a live 200', async () => {
    const to = randomUUID();
    const queued = await notify(to, { hello: 'world' });
    expect(queued.status, queued.text).toBe(202);

    const sock = connect(to);
    try {
      await sock.opened;
      const [first] = await sock.waitForFrames(1, 30_000);
      expect(JSON.parse(first?.text ?? 'null')).toEqual({ hello: 'world' });

      const live = await notify(to, { live: true });
      expect(live.status, live.text).toBe(200);
      const frames = await sock.waitForFrames(2, 30_000);
      expect(JSON.parse(frames[1]?.text ?? 'null')).toEqual({ live: true });
    } finally {
      await sock.close();
    }
  });

  it('serves the dashboard and the account API over TLS on its published port', async () => {
    const dashboard = stack
      .demo()
      .baseUrl.replace(/:\d+$/, `:${process.env.HERALD_DASHBOARD_PORT}`);
    const page = await get(dashboard, stack.ca, '/');
    expect(page.status).toBe(200);
    expect(page.text).toMatch(/<html/i);
    expect((await get(dashboard, stack.ca, '/readyz')).status).toBe(200);
  });

  it('sends signed webhooks: an endpoint made with the admin CLI, an HTTPS receiver of its own CA, a queued event (queued, delivered) and a live one (sent, delivered)', async () => {
    const demo = stack.demo();
    const receiver = await WebhookReceiver.start(stack.project);
    const endpoint = await stack.admin<{
      id: string;
      url: string;
      events: string[];
      secret: string;
    }>(
      'webhook',
      'create',
      '--account',
      demo.accountId,
      '--url',
      receiver.url,
      '--events',
      'event.queued,event.delivered,event.sent',
    );
    try {
      expect(endpoint.url).toBe(receiver.url);
      expect(endpoint.events.sort()).toEqual(['event.delivered', 'event.queued', 'event.sent']);
      expect(endpoint.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
      receiver.secret = endpoint.secret;

      // Queued while the recipient is offline, delivered on connect; then one live.
      const to = randomUUID();
      const queued = await notify(to, { webhook: 'queued' });
      expect(queued.status, queued.text).toBe(202);
      const sock = connect(to);
      const liveId = await (async () => {
        try {
          await sock.opened;
          await sock.waitForFrames(1, 30_000);
          const live = await notify(to, { webhook: 'live' });
          expect(live.status, live.text).toBe(200);
          return live.body.id as string;
        } finally {
          await sock.close();
        }
      })();
      const queuedId = queued.body.id as string;
      const expected = [
        [queuedId, 'event.queued', 'pending'],
        [queuedId, 'event.delivered', 'delivered'],
        [liveId, 'event.sent', 'sent'],
        [liveId, 'event.delivered', 'delivered'],
      ] as const;
      await eventually(
        () => expected.every(([id, type]) => receiver.messages.has(`${id}:${type}`)),
        'the four webhooks at the receiver',
        60_000,
      );
      const lags: string[] = [];
      for (const [id, type, status] of expected) {
        const got = receiver.messages.get(`${id}:${type}`);
        expect(got?.type).toBe(type);
        expect(got?.data).toMatchObject({ id, recipient: to, key_id: demo.testKeyId, status });
        lags.push(`${type} ${(got?.at ?? 0) - (got?.data.ts ?? 0)} ms`);
      }
      expect(receiver.invalid, 'requests that failed standardwebhooks verification').toEqual([]);
      console.info(
        `deploy: webhooks arrived after their transitions: ${lags.join(', ')}; ${receiver.requests} requests for ${receiver.messages.size} messages`,
      );
    } finally {
      await stack.admin('webhook', 'delete', '--id', endpoint.id);
      await receiver.close();
    }
  });

  it('keeps /metrics off the host: 404 on every published port, served only inside the container', async () => {
    const demo = stack.demo();
    const origins = [
      demo.baseUrl,
      demo.wsUrl.replace(/^wss:/, 'https:'),
      demo.baseUrl.replace(/:\d+$/, `:${process.env.HERALD_DASHBOARD_PORT}`),
    ];
    for (const origin of origins) {
      const res = await get(origin, stack.ca, '/metrics');
      expect(res.status, `${origin}/metrics`).toBe(404);
    }
    // The ops listener answers on the container's own loopback, and nowhere else: not from
    // another container on the stack's network either.
    const inside = await composeOk(
      'exec',
      '-T',
      'ingress-api',
      'node',
      '-e',
      "require('http').get('http://127.0.0.1:'+process.env.OPS_PORT+'/metrics',(r)=>{let b='';r.on('data',(c)=>b+=c);r.on('end',()=>{console.log(r.statusCode, /herald_/.test(b))})})",
    );
    expect(inside.trim()).toBe('200 true');
    const across = await composeOk(
      'exec',
      '-T',
      'auth',
      'node',
      '-e',
      "require('net').connect(+process.env.OPS_PORT,'ingress-api').on('connect',()=>console.log('open')).on('error',(e)=>console.log(e.code))",
    );
    expect(across.trim()).toBe('ECONNREFUSED');
  });

  it('loses no queued event across a restart of every service, then of NATS alone', async () => {
    const everyone = randomUUID();
    await queue(everyone, 20, 'restart-all');
    await composeOk('restart');
    console.info(
      `deploy: healthy again ${await stack.waitHealthy(HEALTHY_LIMIT_MS)} ms after restarting every service`,
    );
    await ingressReady();
    await receiveQueued(everyone, 20, 'restart-all');

    const natsOnly = randomUUID();
    await queue(natsOnly, 20, 'restart-nats');
    await composeOk('restart', 'nats');
    console.info(
      `deploy: healthy again ${await stack.waitHealthy(HEALTHY_LIMIT_MS)} ms after restarting NATS`,
    );
    await ingressReady();
    await receiveQueued(natsOnly, 20, 'restart-nats');
  });

  it('keeps the data and the Test key across make compose-down and make compose-up', async () => {
    const before = stack.demo();
    const to = randomUUID();
    await queue(to, 10, 'down-up');

    const down = await stack.make('compose-down');
    expect(down.code, down.stderr).toBe(0);
    expect(await stack.containers()).toEqual([]);

    const up = await stack.make('compose-up');
    expect(up.code, up.stderr).toBe(0);
    const printed = (name: string) => new RegExp(`^${name}=(.*)$`, 'm').exec(up.stdout)?.[1];
    expect(printed('HERALD_TEST_KEY')).toBe(before.testKey);
    expect(printed('HERALD_ACCOUNT_ID')).toBe(before.accountId);
    expect(printed('HERALD_BASE_URL')).toBe(before.baseUrl);
    expect(printed('HERALD_WS_URL')).toBe(before.wsUrl);
    expect(printed('HERALD_DASHBOARD_URL')).toMatch(/^https:\/\/localhost:\d+\/$/);
    await receiveQueued(to, 10, 'down-up');
  }, 900_000);

  it('loses nothing answered 200 or 202 when socket-edge is SIGKILLed under a steady dispatch load', async () => {
    const recipients: string[] = Array.from({ length: 4 }, () => randomUUID());
    // Every socket ever opened, old and new: what any of them received counts.
    const sockets: Array<{ to: string; sock: TestSocket }> = [];
    const open = async () => {
      for (const to of recipients) {
        const sock = connect(to, true);
        sockets.push({ to, sock });
        await sock.opened;
      }
    };
    const received = (to: string) =>
      new Set(sockets.filter((s) => s.to === to).flatMap((s) => s.sock.events().map((e) => e.id)));
    const closeAll = () => Promise.all(sockets.map((s) => s.sock.close()));
    await open();

    // The load: one event every ~125 ms round-robin over the recipients (under the Test key's
    // 10/s dispatch rate), for a bounded time and count, recording what each answer promised.
    const promised = new Map(recipients.map((to) => [to, new Set<string>()]));
    const statuses = new Map<number, number>();
    let sending = true;
    const load = (async () => {
      const deadline = Date.now() + 60_000;
      for (let n = 0; sending && n < 500 && Date.now() < deadline; n++) {
        const to = recipients[n % recipients.length] as string;
        const res = await notify(to, { n }).catch(() => undefined);
        if (res) {
          statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
          if (res.status === 200 || res.status === 202)
            promised.get(to)?.add(res.body.id as string);
        }
        await new Promise((r) => setTimeout(r, 125));
      }
    })();

    await new Promise((r) => setTimeout(r, 3000));
    await composeOk('kill', '-s', 'SIGKILL', 'socket-edge');
    await new Promise((r) => setTimeout(r, 3000));
    await composeOk(
      'up',
      '-d',
      '--wait',
      '--wait-timeout',
      String(HEALTHY_LIMIT_MS / 1000),
      'socket-edge',
    );
    await closeAll();
    await open();
    await new Promise((r) => setTimeout(r, 3000));
    sending = false;
    await load;

    await eventually(
      () =>
        recipients.every((to) => {
          const got = received(to);
          return [...(promised.get(to) ?? [])].every((id) => got.has(id));
        }),
      'every event answered 200 or 202 delivered',
      60_000,
    );
    await closeAll();
    const total = [...promised.values()].reduce((sum, ids) => sum + ids.size, 0);
    console.info(
      `deploy: ${total} events answered 200/202 around a SIGKILL of socket-edge, all delivered; answers ${JSON.stringify(Object.fromEntries(statuses))}`,
    );
    expect(statuses.get(200) ?? 0).toBeGreaterThan(0);
    expect(statuses.get(202) ?? 0).toBeGreaterThan(0);
  });

  describe('backups', () => {
    let dir: string;
    beforeAll(() => {
      dir = mkdtempSync(join(tmpdir(), 'herald-backup-'));
    });
    afterAll(() => rmSync(dir, { recursive: true, force: true }));

    it('restores a Postgres dump and a JetStream snapshot onto empty volumes', async () => {
      const before = stack.demo();
      const to = randomUUID();
      await queue(to, 10, 'backup');
      await composeOk('backup', join(dir, 'b'));

      // The disaster: every container and volume gone. Then the restore, onto empty volumes.
      await composeOk('down', '--volumes');
      await composeOk('restore', join(dir, 'b'));
      await stack.waitHealthy(HEALTHY_LIMIT_MS);
      await ingressReady();

      // Postgres came back: the account and its Test key work (a fresh database knows neither).
      const up = await stack.make('compose-up');
      expect(up.code, up.stderr).toBe(0);
      expect(stack.demo().testKey).toBe(before.testKey);
      expect(stack.demo().accountId).toBe(before.accountId);
      // JetStream came back: the events queued before the backup arrive.
      await receiveQueued(to, 10, 'backup');
    }, 900_000);
  });
  it('takes an M-Pesa payment through the Daraja simulator over TLS (profile dev)', async () => {
    expect((process.env.COMPOSE_PROFILES ?? '').split(',')).toContain('dev');
    const admin = (...args: string[]) =>
      stack.admin<{ id: string; status: string; plan: string }>(...args);
    const payment = await admin(
      'billing',
      'checkout',
      '--account',
      stack.demo().accountId,
      '--plan',
      'hobby',
      '--phone',
      '0708374149',
    );
    expect(payment.status).toBe('pending');
    // The simulator answers after its delay, calling back auth at https://auth:8445 (verified
    // against the stack's CA); auth confirms with a query and settles.
    let last = payment;
    await eventually(
      async () => {
        last = await admin('billing', 'show', '--payment', payment.id);
        return last.status !== 'pending';
      },
      'the payment settled',
      60_000,
    );
    expect(last.status).toBe('succeeded');
  });
});
