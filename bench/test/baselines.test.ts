import { randomUUID } from 'node:crypto';
import { makeCerts, type NatsServer, startNatsServer, type TestCerts } from '@herald/testkit';
import { connect, type NatsConnection } from 'nats';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import {
  ECHO_SUBJECT,
  FLOOR_DISPATCH_SUBJECT,
  KOA_STREAM,
  KOA_SUBJECTS,
  koaSubject,
} from '../src/baselines/names.js';
import { type BaselineServers, startBaselineServers } from '../src/env/baseline-servers.js';
import { memoryAfterGc } from '../src/env/inspector.js';
import { kernelSocketMemory } from '../src/env/kernel-socket-memory.js';
import { pinning } from '../src/env/pinning.js';
import { batchOutcome, pushBatchBody, pushBody, rawWsUrl } from '../src/figures/herald-wire.js';
import { type ClientTls, clientTls } from '../src/load/client-tls.js';
import { type Poster, poster } from '../src/load/http-poster.js';
import { waitUntil } from '../src/load/pace.js';
import { SioFleet } from '../src/load/sio-fleet.js';
import { SourceAddresses } from '../src/load/source-addresses.js';
import { WsFleet } from '../src/load/ws-fleet.js';
import { payloadMaker } from '../src/payload.js';

// The baselines are measured against Herald, so they must do the job they claim: these run them
// over real TLS sockets, with the same client code the figures use.
describe('baseline servers', () => {
  let certs: TestCerts;
  let nats: NatsServer;
  let servers: BaselineServers;
  let tls: ClientTls;
  let raw: Poster;
  let sio: Poster;
  let koa: Poster;
  let floor: Poster;
  const addresses = new SourceAddresses(2);
  const payload = payloadMaker(256);

  beforeAll(async () => {
    [certs, nats] = await Promise.all([makeCerts(), startNatsServer()]);
    servers = await startBaselineServers({
      pinning: pinning({ enabled: false, serverCpus: '0', clientCpus: '1' }),
      certs,
      natsLogin: nats.connectOptions(),
      runtime: 'source',
    });
    tls = clientTls(certs.ca);
    raw = poster(servers.rawWsOrigin, certs.ca, 2);
    sio = poster(servers.socketIoOrigin, certs.ca, 2);
    koa = poster(servers.koaJetStreamOrigin, certs.ca, 2);
    floor = poster(servers.designFloorOrigin, certs.ca, 2);
  });

  afterAll(async () => {
    await Promise.all([raw?.close(), sio?.close(), koa?.close(), floor?.close()]);
    await servers?.stop();
    await nats?.stop();
  });

  const fleetOf = (recipients: string[], frames: Array<{ i: number; text: string }>) =>
    new WsFleet({
      url: (i) => rawWsUrl(servers.rawWsOrigin, recipients[i] as string),
      tls,
      addresses,
      concurrency: 4,
      handshakeTimeoutMs: 5000,
      onMessage: (i, data) => frames.push({ i, text: data.toString('utf8') }),
    });

  it('raw ws: POST /push writes the payload, byte for byte, to every socket of the recipient and no other', async () => {
    const a = randomUUID();
    const b = randomUUID();
    const frames: Array<{ i: number; text: string }> = [];
    const fleet = fleetOf([a, a, b], frames);
    try {
      expect((await fleet.grow(3)).opened).toBe(3);
      const text = payload.make(7);
      const res = await raw.post('/push', pushBody(a, text));
      expect(res.status).toBe(200);
      await waitUntil(() => frames.length >= 2, 5000);
      expect(frames.map((f) => f.i).sort()).toEqual([0, 1]);
      expect(frames.every((f) => f.text === text)).toBe(true);
      expect((await raw.post('/push', pushBody(randomUUID(), text))).status).toBe(202);
    } finally {
      await fleet.close();
    }
  });

  it('raw ws: echoes frames, and a blast pushes exactly maxCount frames round-robin', async () => {
    const frames: Array<{ i: number; text: string }> = [];
    const fleet = fleetOf([randomUUID(), randomUUID(), randomUUID()], frames);
    try {
      await fleet.grow(3);
      fleet.sockets[1]?.send('ping-frame');
      await waitUntil(() => frames.length === 1, 5000);
      expect(frames[0]).toEqual({ i: 1, text: 'ping-frame' });
      frames.length = 0;
      const res = await raw.post(
        '/blast',
        JSON.stringify({ payload: payload.make(1), durationMs: 5000, maxCount: 30 }),
      );
      expect(JSON.parse(res.text)).toMatchObject({ sent: 30 });
      await waitUntil(() => frames.length >= 30, 5000);
      expect(frames).toHaveLength(30);
      expect(new Set(frames.map((f) => f.i))).toEqual(new Set([0, 1, 2]));
    } finally {
      await fleet.close();
    }
  });

  it('Socket.IO: POST /push emits the payload to the recipient room only', async () => {
    const a = randomUUID();
    const got: Array<{ i: number; payload: unknown }> = [];
    const fleet = new SioFleet({
      origin: servers.socketIoOrigin,
      recipient: (i) => (i === 0 ? a : randomUUID()),
      tls,
      addresses,
      concurrency: 2,
      handshakeTimeoutMs: 5000,
      onEvent: (i, p) => got.push({ i, payload: p }),
    });
    try {
      expect((await fleet.grow(2)).opened).toBe(2);
      const text = payload.make(3);
      expect((await sio.post('/push', pushBody(a, text))).status).toBe(200);
      await waitUntil(() => got.length >= 1, 5000);
      await new Promise((r) => setTimeout(r, 50));
      expect(got).toEqual([{ i: 0, payload: JSON.parse(text) }]);
    } finally {
      await fleet.close();
    }
  });

  it('koa + JetStream: stores a valid event and answers 202 with its id; refuses a bad body with nothing stored', async () => {
    const nc: NatsConnection = await connect(nats.connectOptions());
    try {
      const jsm = await nc.jetstreamManager();
      await jsm.streams.add({ name: KOA_STREAM, subjects: [KOA_SUBJECTS] });
      const recipient = randomUUID();
      const text = payload.make(5);
      const body = (r: string) =>
        `{"recipient":"${r}","payload":${text},"api_key":"hk_test_x","client":"mobile"}`;
      const ok = await koa.post('/notify', body(recipient));
      expect(ok.status).toBe(202);
      const { id } = JSON.parse(ok.text) as { id: string };
      const stored = await jsm.streams.getMessage(KOA_STREAM, {
        last_by_subj: koaSubject(recipient),
      });
      expect(stored.string()).toBe(JSON.stringify(JSON.parse(text)));
      expect(stored.header.get('Nats-Msg-Id')).toBe(id);
      expect((await koa.post('/notify', body('not-a-uuid'))).status).toBe(400);
      expect((await koa.post('/notify', '{"recipient":')).status).toBe(400);
      const noPayload = `{"recipient":"${recipient}","api_key":"hk_test_x","client":"mobile"}`;
      expect((await koa.post('/notify', noPayload)).status).toBe(400);
      expect((await jsm.streams.info(KOA_STREAM)).state.messages).toBe(1);
    } finally {
      await nc.close();
    }
  });

  it('design floor: relays a valid notify, over HTTP and NATS, to the recipient’s raw ws sockets only; refuses a bad body', async () => {
    const a = randomUUID();
    const frames: Array<{ i: number; text: string }> = [];
    const fleet = fleetOf([a, randomUUID()], frames);
    const nc: NatsConnection = await connect(nats.connectOptions());
    const body = (r: string, text: string) =>
      `{"recipient":"${r}","payload":${text},"api_key":"hk_test_x","client":"mobile"}`;
    try {
      expect((await fleet.grow(2)).opened).toBe(2);
      const overHttp = payload.make(11);
      const res = await floor.post('/notify', body(a, overHttp));
      expect(res.status, res.text).toBe(200);
      const viaNats = payload.make(12);
      const reply = await nc.request(FLOOR_DISPATCH_SUBJECT, body(a, viaNats), { timeout: 5000 });
      expect(JSON.parse(reply.string())).toMatchObject({ http_status: 200, status: 'sent' });
      await waitUntil(() => frames.length >= 2, 5000);
      await new Promise((r) => setTimeout(r, 50));
      expect(frames.map((f) => f.i)).toEqual([0, 0]);
      expect(frames.map((f) => JSON.parse(f.text))).toEqual([
        JSON.parse(overHttp),
        JSON.parse(viaNats),
      ]);
      expect((await floor.post('/notify', body(randomUUID(), overHttp))).status).toBe(404);
      expect((await floor.post('/notify', body('not-a-uuid', overHttp))).status).toBe(400);
      expect((await floor.post('/notify', '{"recipient":')).status).toBe(400);
      expect(frames).toHaveLength(2);
    } finally {
      await nc.close();
      await fleet.close();
    }
  });

  it('batches: raw ws, Socket.IO and the design floor deliver each event of a batch to its own recipient and answer one result per event', async () => {
    const [a, b] = [randomUUID(), randomUUID()];
    const absent = randomUUID();
    const events = [
      { recipient: a, payloadJson: payload.make(21) },
      { recipient: b, payloadJson: payload.make(22) },
    ];
    const rawFrames: Array<{ i: number; text: string }> = [];
    const rawFleet = fleetOf([a, b], rawFrames);
    const sioGot: Array<{ i: number; payload: unknown }> = [];
    const sioFleet = new SioFleet({
      origin: servers.socketIoOrigin,
      recipient: (i) => [a, b][i] as string,
      tls,
      addresses,
      concurrency: 2,
      handshakeTimeoutMs: 5000,
      onEvent: (i, p) => sioGot.push({ i, payload: p }),
    });
    try {
      await Promise.all([rawFleet.grow(2), sioFleet.grow(2)]);
      const raw202 = await raw.post(
        '/push/batch',
        pushBatchBody([...events, { recipient: absent, payloadJson: payload.make(23) }]),
      );
      expect(batchOutcome(raw202, 3)).toEqual({ sent: 2, stored: 1 });
      await waitUntil(() => rawFrames.length >= 2, 5000);
      const heraldBody = `{"api_key":"hk_test_x","client":"mobile","events":[${events
        .map((e) => `{"recipient":"${e.recipient}","payload":${e.payloadJson}}`)
        .join(',')}]}`;
      expect(batchOutcome(await floor.post('/notify/batch', heraldBody), 2)).toEqual({
        sent: 2,
        stored: 0,
      });
      await waitUntil(() => rawFrames.length >= 4, 5000);
      expect(
        rawFrames
          .map((f) => [f.i, JSON.parse(f.text).seq])
          .sort((x, y) => String(x).localeCompare(String(y))),
      ).toEqual([
        [0, '0000000021'],
        [0, '0000000021'],
        [1, '0000000022'],
        [1, '0000000022'],
      ]);
      expect((await floor.post('/notify/batch', '{"events":[]}')).status).toBe(400);
      expect(batchOutcome(await sio.post('/push/batch', pushBatchBody(events)), 2)).toEqual({
        sent: 2,
        stored: 0,
      });
      await waitUntil(() => sioGot.length >= 2, 5000);
      expect(sioGot.sort((x, y) => x.i - y.i)).toEqual([
        { i: 0, payload: JSON.parse(payload.make(21)) },
        { i: 1, payload: JSON.parse(payload.make(22)) },
      ]);
    } finally {
      await Promise.all([rawFleet.close(), sioFleet.close()]);
    }
  });

  it('design floor: a socket opened with a queue subject gets its stored events in order, each acked once written; its consumer goes with it', async () => {
    const nc: NatsConnection = await connect(nats.connectOptions());
    const frames: Array<{ i: number; text: string }> = [];
    const recipient = randomUUID();
    const stream = 'FLOOR_TEST';
    const subject = `floor.q.${recipient}`;
    const fleet = new WsFleet({
      url: () =>
        `${rawWsUrl(servers.rawWsOrigin, recipient)}&${new URLSearchParams({ stream, subject })}`,
      tls,
      addresses,
      concurrency: 1,
      handshakeTimeoutMs: 5000,
      onMessage: (i, data) => frames.push({ i, text: data.toString('utf8') }),
    });
    try {
      const jsm = await nc.jetstreamManager();
      await jsm.streams.add({ name: stream, subjects: ['floor.q.>'] });
      const js = nc.jetstream();
      const texts = [1, 2, 3].map((k) => payload.make(k));
      for (const t of texts) await js.publish(subject, t);
      await js.publish(`floor.q.${randomUUID()}`, payload.make(4));
      expect((await fleet.grow(1)).opened).toBe(1);
      await waitUntil(() => frames.length >= 3, 5000);
      await new Promise((r) => setTimeout(r, 50));
      expect(frames.map((f) => f.text)).toEqual(texts);
      const durable = `floor_${recipient}`;
      await vi.waitFor(
        async () =>
          expect((await jsm.consumers.info(stream, durable)).ack_floor.stream_seq).toBe(3),
        { timeout: 5000, interval: 20 },
      );
      await fleet.close();
      await vi.waitFor(
        async () => expect(await jsm.consumers.list(stream).next()).toHaveLength(0),
        { timeout: 5000, interval: 20 },
      );
    } finally {
      await fleet.close();
      await nc.close();
    }
  });

  it('NATS responder: answers a request with its data', async () => {
    const nc: NatsConnection = await connect(nats.connectOptions());
    try {
      const reply = await nc.request(ECHO_SUBJECT, payload.make(9), { timeout: 5000 });
      expect(reply.string()).toBe(payload.make(9));
    } finally {
      await nc.close();
    }
  });

  it('reads a server’s memory after GC through its inspector, and its sockets’ kernel memory', async () => {
    const frames: Array<{ i: number; text: string }> = [];
    const fleet = fleetOf([randomUUID(), randomUUID()], frames);
    try {
      await fleet.grow(2);
      const port = servers.rawWs.inspectPort;
      expect(port).toBeDefined();
      const mem = await memoryAfterGc(port as number);
      expect(mem.rss).toBeGreaterThan(mem.heapUsed);
      expect(mem.heapUsed).toBeGreaterThan(0);
      const kernel = await kernelSocketMemory(servers.rawWs.port);
      // The two fleet sockets, plus any keep-alive connection of the HTTP client.
      expect(kernel.connections).toBeGreaterThanOrEqual(2);
      expect(kernel.bufferBytes).toBeGreaterThanOrEqual(0);
    } finally {
      await fleet.close();
    }
  });
});
