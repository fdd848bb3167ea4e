import { randomUUID } from 'node:crypto';
import {
  AUTH_CALLOUT_SUBJECT,
  permits as allowed,
  billingSubjects,
  type NatsService,
  PUSHER_APP_SUBJECT,
  servicePermissions,
  subjects,
} from '@herald/proto';
import type { NatsUser } from '@herald/testkit';
import { type NatsConnection, connect as natsConnect } from 'nats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useStack } from './fixtures.js';

/** One subject of every kind Herald and JetStream speak, for `account` (and another one). */
function probes(account: string, other: string): string[] {
  const r = randomUUID();
  return [
    subjects.live(account, r),
    subjects.queue(account, r),
    subjects.queued(account, r),
    subjects.dispatch(account),
    subjects.dispatchBatch(account),
    subjects.dispatch(other),
    subjects.dispatchBatch(other),
    subjects.liveHolders(account),
    subjects.edgeLive(randomUUID(), account),
    subjects.authVerify,
    subjects.authInvalidate,
    PUSHER_APP_SUBJECT,
    subjects.status(account),
    subjects.statusQuery,
    subjects.statusTrim,
    subjects.inboxStore(account),
    subjects.inboxQuery(account),
    subjects.inboxExpire,
    subjects.inboxUnread(account, r),
    billingSubjects.notice(account),
    // JetStream's API on a stream that does not exist: an allowed probe changes nothing.
    '$JS.API.INFO',
    '$JS.API.STREAM.INFO.PROBE',
    '$JS.API.STREAM.DELETE.PROBE',
    '$JS.API.STREAM.PURGE.PROBE',
    '$JS.API.STREAM.MSG.DELETE.PROBE',
    '$JS.API.CONSUMER.CREATE.PROBE.c',
    '$JS.API.CONSUMER.DELETE.PROBE.c',
    '$JS.API.CONSUMER.RESET.PROBE.c',
    '$JS.API.CONSUMER.MSG.NEXT.PROBE.c',
    '$JS.ACK.PROBE.c.1.1.1.1.0',
    '$KV.herald_probe.k',
    AUTH_CALLOUT_SUBJECT,
    'rt.probe',
    'probe.elsewhere',
  ];
}

/**
 * Does `op` (publish or subscribe) on every subject in order, then on a sentinel nobody may use,
 * and returns the subjects the server refused before the sentinel's refusal came back. The
 * server answers in order, so the sentinel's refusal means every earlier answer is in.
 */
async function refused(nc: NatsConnection, op: 'publish' | 'subscribe', list: string[]) {
  const sentinel = `sentinel.${randomUUID()}`;
  const seen: string[] = [];
  const done = (async () => {
    for await (const s of nc.status()) {
      const ctx = (s as { permissionContext?: { operation: string; subject: string } })
        .permissionContext;
      if (!ctx) continue;
      if (ctx.subject === sentinel) return;
      seen.push(ctx.subject);
    }
  })();
  for (const subject of [...list, sentinel]) {
    if (op === 'publish') nc.publish(subject);
    else nc.subscribe(subject, { callback: () => {} });
  }
  await nc.flush();
  await done;
  return seen.sort();
}

const SERVICES = Object.keys(servicePermissions) as NatsService[];

describe('NATS least privilege (a real nats-server with deploy/nats/users.conf)', () => {
  const stack = useStack({ services: ['auth'] });
  let account: string;
  let other: string;
  let backend: { user: string; password: string };

  beforeAll(async () => {
    account = (await stack().createAccount()).id;
    other = (await stack().createAccount()).id;
    backend = (await stack().admin(['nats-user', 'create', '--account', account, '--json'])) as {
      user: string;
      password: string;
    };
  });

  it('refuses a connection without credentials, and one with a wrong password', async () => {
    const { url } = stack().nats;
    await expect(natsConnect({ servers: url, reconnect: false })).rejects.toMatchObject({
      code: 'AUTHORIZATION_VIOLATION',
    });
    const edge = stack().nats.credentials['socket-edge'];
    await expect(
      natsConnect({ servers: url, user: edge.user, pass: `${edge.pass}x`, reconnect: false }),
    ).rejects.toMatchObject({ code: 'AUTHORIZATION_VIOLATION' });
    await expect(
      natsConnect({ servers: url, user: backend.user, pass: 'wrong', reconnect: false }),
    ).rejects.toMatchObject({ code: 'AUTHORIZATION_VIOLATION' });
  });

  describe.each(SERVICES)('service user herald-%s', (service) => {
    let nc: NatsConnection;
    beforeAll(async () => {
      nc = await natsConnect(stack().nats.connectOptions(service as NatsUser));
    });
    afterAll(async () => {
      await nc?.close();
    });

    it('is refused every publish outside its permissions, and only those', async () => {
      const all = probes(account, other);
      const perms = servicePermissions[service];
      const want = all.filter((s) => !allowed(perms.publish, s)).sort();
      expect(want.length).toBeGreaterThan(0);
      expect(await refused(nc, 'publish', all)).toEqual(want);
    });

    it('is refused every subscription outside its permissions, and only those', async () => {
      const all = probes(account, other);
      const perms = servicePermissions[service];
      const want = all.filter((s) => !allowed(perms.subscribe, s)).sort();
      expect(want.length).toBeGreaterThan(0);
      expect(await refused(nc, 'subscribe', all)).toEqual(want);
    });
  });

  it('socket-edge may not push live events nor read dispatches; ingress may not read live subjects', async () => {
    // The holes the issue names, spelled out rather than derived.
    const edge = servicePermissions['socket-edge'];
    expect(allowed(edge.publish, subjects.live(account, randomUUID()))).toBe(false);
    expect(allowed(edge.subscribe, subjects.dispatchBatch(account))).toBe(false);
    const ingress = servicePermissions['ingress-api'];
    expect(allowed(ingress.subscribe, subjects.live(account, randomUUID()))).toBe(false);
  });

  describe("a customer backend's user (admin nats-user create)", () => {
    let nc: NatsConnection;
    beforeAll(async () => {
      nc = await natsConnect({
        servers: stack().nats.url,
        user: backend.user,
        pass: backend.password,
      });
    });
    afterAll(async () => {
      await nc?.close();
    });

    it('may publish only to its own account dispatch subjects, single and batch', async () => {
      const all = probes(account, other);
      const own = [subjects.dispatch(account), subjects.dispatchBatch(account)];
      expect(await refused(nc, 'publish', all)).toEqual(all.filter((s) => !own.includes(s)).sort());
    });

    it('may subscribe to nothing but reply inboxes', async () => {
      const all = [...probes(account, other), 'rt.live.>', 'rt.queue.>', '$JS.API.>', '>'];
      expect(await refused(nc, 'subscribe', all)).toEqual([...all].sort());
      expect(await refused(nc, 'subscribe', [`_INBOX.${randomUUID()}`])).toEqual([]);
    });

    it('gets the reply to its request: the round trip a dispatch makes', async () => {
      // A responder on the backend's own subject (the operator's connection stands in for ingress).
      const responder = await natsConnect(stack().nats.connectOptions());
      try {
        responder.subscribe(subjects.dispatch(account), {
          callback: (_err, msg) => msg.respond(new TextEncoder().encode('pong')),
        });
        await responder.flush();
        const reply = await nc.request(subjects.dispatch(account), 'ping', { timeout: 10_000 });
        expect(new TextDecoder().decode(reply.data)).toBe('pong');
      } finally {
        await responder.close();
      }
    });
  });
});
