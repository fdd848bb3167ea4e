import { randomUUID } from 'node:crypto';
import { makeCerts, type TestCerts } from '@herald/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type WebSocket from 'ws';
import { findCentrifugo } from '../src/env/centrifugo-binary.js';
import {
  type CentrifugoEngine,
  type CentrifugoServer,
  startCentrifugo,
} from '../src/env/centrifugo-server.js';
import { pinning } from '../src/env/pinning.js';
import {
  batchBody,
  connectCommand,
  connectionToken,
  expectBatchPublished,
  expectPublished,
  publishBody,
} from '../src/figures/centrifugo-wire.js';
import { centrifugoFleet } from '../src/load/centrifugo-fleet.js';
import { type ClientTls, clientTls } from '../src/load/client-tls.js';
import { type Poster, poster } from '../src/load/http-poster.js';
import { waitUntil } from '../src/load/pace.js';
import { SourceAddresses } from '../src/load/source-addresses.js';
import { WsFleet } from '../src/load/ws-fleet.js';
import { payloadMaker, seqOf } from '../src/payload.js';

// Centrifugo is the peer every figure measures Herald against (issue 31), so the bench must drive
// it as its users do: these run the pinned build (and a redis-server of the bench's own) over
// real TLS sockets, with the client code the figures use. `make deps-bench` builds it (every machine
// that runs these tests has Go; without it the bench skips Centrifugo, centrifugo-binary.test.ts).
const binary = await findCentrifugo();
const payload = payloadMaker(256);
const seqOfData = (data: unknown) => seqOf(JSON.stringify(data));

describe('Centrifugo as the bench runs it', () => {
  let certs: TestCerts;
  let tls: ClientTls;
  const addresses = new SourceAddresses(2);

  beforeAll(async () => {
    if (!binary.found) throw new Error(binary.reason);
    certs = await makeCerts();
    tls = clientTls(certs.ca);
  });

  describe.each<CentrifugoEngine>(['memory', 'redis'])('%s engine', (engine) => {
    let server: CentrifugoServer;
    let api: Poster;

    beforeAll(async () => {
      if (!binary.found) throw new Error(binary.reason);
      server = await startCentrifugo({
        bin: binary.bin,
        engine,
        pinning: pinning({ enabled: false, serverCpus: '0', clientCpus: '1' }),
        certs,
        historySize: 50,
        publicationBytes: 400,
      });
      api = poster(server.origin, certs.ca, 2, { 'x-api-key': server.apiKey });
    });

    afterAll(async () => {
      await api?.close();
      await server?.stop();
    });

    const fleetOf = (
      recipients: string[],
      recover: boolean,
      got: Array<{ i: number; seq: number }>,
    ) =>
      centrifugoFleet({
        server,
        recipient: (i) => recipients[i] as string,
        recover,
        tls,
        addresses,
        concurrency: 4,
        handshakeTimeoutMs: 5000,
        onPublication: (i, data) => got.push({ i, seq: seqOfData(data) }),
      });

    it('a publish reaches every socket of its recipient and no other, payload intact', async () => {
      const [a, b] = [randomUUID(), randomUUID()];
      const got: Array<{ i: number; seq: number }> = [];
      const fleet = fleetOf([a, a, b], false, got);
      try {
        expect((await fleet.grow(3)).opened).toBe(3);
        expectPublished(await api.post('/api/publish', publishBody(a, payload.make(11))));
        await waitUntil(() => got.length >= 2, 5000);
        await new Promise((r) => setTimeout(r, 200));
        expect(got.sort((x, y) => x.i - y.i)).toEqual([
          { i: 0, seq: 11 },
          { i: 1, seq: 11 },
        ]);
      } finally {
        await fleet.close();
      }
    });

    it('a batch delivers each event to its own recipient', async () => {
      const rs = [randomUUID(), randomUUID(), randomUUID()];
      const got: Array<{ i: number; seq: number }> = [];
      const fleet = fleetOf(rs, false, got);
      try {
        await fleet.grow(3);
        const events = rs.map((recipient, k) => ({ recipient, payloadJson: payload.make(20 + k) }));
        expectBatchPublished(await api.post('/api/batch', batchBody(events)), 3);
        await waitUntil(() => got.length >= 3, 5000);
        expect(got.sort((x, y) => x.i - y.i)).toEqual([
          { i: 0, seq: 20 },
          { i: 1, seq: 21 },
          { i: 2, seq: 22 },
        ]);
      } finally {
        await fleet.close();
      }
    });

    it('events published while the recipient is away are replayed, in order, on a first connect with recover', async () => {
      const away = randomUUID();
      for (let k = 0; k < 30; k++)
        expectPublished(await api.post('/api/publish', publishBody(away, payload.make(100 + k))));
      const replayed: Array<{ i: number; seq: number }> = [];
      const plain: Array<{ i: number; seq: number }> = [];
      const recovering = fleetOf([away], true, replayed);
      const notRecovering = fleetOf([away], false, plain);
      try {
        await recovering.grow(1);
        await notRecovering.grow(1);
        // Replayed in the connect reply itself: nothing to wait for once the socket counts as open.
        expect(replayed.map((x) => x.seq)).toEqual(Array.from({ length: 30 }, (_, k) => 100 + k));
        expect(plain).toEqual([]);
      } finally {
        await Promise.all([recovering.close(), notRecovering.close()]);
      }
    });

    /** A socket that speaks the connect itself, to present a token the fleet would not. */
    const socketWith = (
      handshake: (ws: WebSocket) => Promise<void>,
      onMessage?: (data: Buffer) => void,
    ) =>
      new WsFleet({
        url: () => server.wsUrl,
        tls,
        addresses,
        concurrency: 1,
        handshakeTimeoutMs: 5000,
        ...(onMessage ? { onMessage: (_i: number, data: Buffer) => onMessage(data) } : {}),
        handshake: (_i, ws) => handshake(ws),
      });

    it("the token's sub decides the channel: a socket whose token names another user gets that user's events", async () => {
      const [claimed, other] = [randomUUID(), randomUUID()];
      const got: string[] = [];
      // The recipient the fleet is told is `other`, but the token it presents is for `claimed`.
      const fleet = socketWith(
        (ws) =>
          new Promise<void>((resolve) => {
            ws.once('message', () => resolve());
            ws.send(connectCommand(server, claimed, false));
          }),
        (data) => got.push(data.toString('utf8')),
      );
      try {
        await fleet.grow(1);
        expectPublished(await api.post('/api/publish', publishBody(other, payload.make(1))));
        expectPublished(await api.post('/api/publish', publishBody(claimed, payload.make(2))));
        await waitUntil(() => got.length >= 2, 5000);
        await new Promise((r) => setTimeout(r, 200));
        const pushes = got.filter((t) => t.includes('"push"'));
        expect(pushes).toHaveLength(1);
        expect(pushes[0]).toContain(`personal:#${claimed}`);
        expect(seqOfData(JSON.parse(pushes[0] as string).push.pub.data)).toBe(2);
      } finally {
        await fleet.close();
      }
    });

    it('refuses a connection whose token was signed with another secret', async () => {
      const fleet = socketWith(
        (ws) =>
          new Promise<void>((resolve, reject) => {
            ws.once('message', (d: Buffer) =>
              d.toString().includes('"error"') ? reject(new Error(d.toString())) : resolve(),
            );
            ws.once('close', (code) => reject(new Error(`closed ${code}`)));
            const token = connectionToken('not-the-secret', randomUUID());
            ws.send(JSON.stringify({ id: 1, connect: { token } }));
          }),
      );
      try {
        const out = await fleet.grow(1);
        expect(out.failed).toBe(1);
      } finally {
        await fleet.close();
      }
    });

    it('the server API refuses a request without the key', async () => {
      expect(await fetchNoKey(server.origin, certs.ca)).toBe(401);
    });

    if (engine === 'redis') {
      it('keeps its history in a redis-server of its own on a free port, never the machine 6379', async () => {
        const port = Number(new URL(server.redisUrl ?? '').port);
        expect(port).toBeGreaterThan(0);
        expect(port).not.toBe(6379);
        const before = await redisDbSize(port);
        expectPublished(await api.post('/api/publish', publishBody(randomUUID(), payload.make(5))));
        expect(await redisDbSize(port)).toBeGreaterThan(before);
      });
    }
  });
});

async function fetchNoKey(origin: string, ca: string): Promise<number> {
  const { request } = await import('node:https');
  return new Promise((resolve, reject) => {
    const req = request(
      `${origin}/api/publish`,
      { method: 'POST', ca, headers: { 'content-type': 'application/json' } },
      (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      },
    );
    req.on('error', reject);
    req.end(publishBody(randomUUID(), '{"seq":"0000000001"}'));
  });
}

/** DBSIZE of the Redis on the port, over a raw socket (RESP). */
async function redisDbSize(port: number): Promise<number> {
  const net = await import('node:net');
  return new Promise((resolve, reject) => {
    const s = net.connect(port, '127.0.0.1', () => s.write('DBSIZE\r\n'));
    s.once('error', reject);
    s.once('data', (d) => {
      s.destroy();
      resolve(Number(/^:(\d+)/.exec(d.toString())?.[1] ?? Number.NaN));
    });
  });
}
