import { type ChildProcess, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import type { Socket } from 'node:net';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { EventHeaders, subjects } from '@herald/proto';
import { createInbox, headers } from 'nats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ACCOUNT_A,
  consumerInfo,
  expectRefusal,
  keys,
  metric,
  openClient,
  queueEvent,
  type RunningEdge,
  type Stack,
  sendLive,
  startEdge,
  startStack,
  waitUntil,
} from './fixture.js';

let stack: Stack;

beforeAll(async () => {
  stack = await startStack();
});

afterAll(async () => {
  await stack?.stop();
});

describe('slow readers', () => {
  /**
   * Opens a client whose TLS socket stops reading as soon as it is open: ws has no public "stop
   * reading" switch, and only a really full TCP window makes the edge's send buffer grow, which is
   * the condition under test. Paused on open because ws resumes the socket when it takes it over
   * after the upgrade.
   */
  const openStalled = (edge: RunningEdge, recipient: string) => {
    const client = openClient(stack, edge.port, { recipient });
    let tcp: Socket | undefined;
    client.ws.once('upgrade', (res) => {
      tcp = res.socket as Socket;
    });
    client.ws.once('open', () => tcp?.pause());
    return { client, resume: () => tcp?.resume() };
  };
  const slowCloses = async (edge: RunningEdge) =>
    metric(await edge.metrics(), 'herald_slow_consumer_closes_total{service="socket-edge"}');
  const pad = 'x'.repeat(8 * 1024);

  it('closes a socket whose unproven bytes outgrow MAX_UNPROVEN_BYTES with live events, with 1013', async () => {
    const edge = await startEdge(stack, { MAX_UNPROVEN_BYTES: String(256 * 1024) });
    try {
      const recipient = randomUUID();
      const { client, resume } = openStalled(edge, recipient);
      await client.opened;
      // Live events are pushed as they come: a reader that stopped reading is cut off at the cap
      // (bounded memory per socket) rather than buffered without end. 3000 × 8 KiB = 24 MB bounds
      // the loop: far more than the kernel buffers and the 256 KiB cap hold.
      // The edge answers a live push once the write completed, which never happens here: publish
      // them (as ingress's request would) without waiting for answers.
      const inbox = createInbox();
      let sent = 0;
      while (sent < 3000 && (sent % 100 !== 0 || (await slowCloses(edge)) === 0)) {
        const h = headers();
        h.set(EventHeaders.id, randomUUID());
        h.set(EventHeaders.ts, String(Date.now()));
        stack.nc.publish(
          subjects.live(ACCOUNT_A, recipient),
          new TextEncoder().encode(`{"n":${sent},"pad":"${pad}"}`),
          {
            headers: h,
            reply: inbox,
          },
        );
        sent++;
        if (sent % 100 === 0) await stack.nc.flush();
      }
      expect(await slowCloses(edge)).toBe(1);
      resume();
      expect(await client.closed).toEqual({ code: 1013, reason: 'slow consumer' });
    } finally {
      await edge.close();
    }
  });

  // The second case is QUEUE_BATCH at its useful edge (MAX_ACK_PENDING, 64) against a byte cap
  // whose half holds 4 of these events: a pull brings 16 times what the drain may write at once.
  it.each([
    ['the default batch', { MAX_UNPROVEN_BYTES: String(256 * 1024) }, 1500],
    [
      'a batch of MAX_ACK_PENDING',
      { MAX_UNPROVEN_BYTES: String(72 * 1024), QUEUE_BATCH: '64', MAX_ACK_PENDING: '64' },
      600,
    ],
  ] as const)(
    'paces a queue drain (%s) to a reader that stopped reading instead of closing it, then delivers every event once, in order',
    async (_name, env, COUNT) => {
      const edge = await startEdge(stack, env);
      try {
        const recipient = randomUUID();
        // 8 KiB events (1500: 12 MB): more than the kernel buffers of a stalled connection hold.
        const seqs: number[] = [];
        for (let n = 0; n < COUNT; n++)
          seqs.push(await queueEvent(stack, ACCOUNT_A, recipient, `{"n":${n},"pad":"${pad}"}`));
        const lastSeq = seqs[COUNT - 1] ?? 0;
        const { client, resume } = openStalled(edge, recipient);
        await client.opened;
        // The drain fills the TCP window, then waits for room: the edge's buffer stays under the cap.
        await waitUntil(
          'the drain to stall on the full window',
          async () => ((await consumerInfo(stack, ACCOUNT_A, recipient))?.num_ack_pending ?? 0) > 0,
        );
        await new Promise((r) => setTimeout(r, 1500));
        expect(await slowCloses(edge)).toBe(0);
        resume();
        await waitUntil('every event', () => client.frames.length >= COUNT, 30_000);
        expect(client.frames.map((f) => (JSON.parse(f) as { n: number }).n)).toEqual(
          Array.from({ length: COUNT }, (_, n) => n),
        );
        await waitUntil(
          'the acks',
          async () =>
            (await consumerInfo(stack, ACCOUNT_A, recipient))?.ack_floor.stream_seq === lastSeq,
        );
        expect(client.ws.readyState).toBe(client.ws.OPEN);
        expect(await slowCloses(edge)).toBe(0);
        client.ws.close();
      } finally {
        await edge.close();
      }
    },
    60_000,
  );
});

describe('heartbeat', () => {
  it('terminates a socket that does not answer pings, and keeps one that does', async () => {
    const edge = await startEdge(stack, { HEARTBEAT_INTERVAL_MS: '100' });
    try {
      const recipient = randomUUID();
      const silent = openClient(stack, edge.port, { recipient, autoPong: false });
      const healthy = openClient(stack, edge.port, { recipient });
      await Promise.all([silent.opened, healthy.opened]);
      // No close frame: the edge cut the connection.
      expect((await silent.closed).code).toBe(1006);
      expect(healthy.ws.readyState).toBe(healthy.ws.OPEN);
      expect(await sendLive(stack.nc, ACCOUNT_A, recipient, '"alive"')).toEqual({
        v: 1,
        sockets: 1,
      });
      healthy.ws.close();
    } finally {
      await edge.close();
    }
  });
});

describe('NATS restart', () => {
  it('keeps delivering live and queued events to an open socket after the broker restarts', async () => {
    const own = await startStack();
    const edge = await startEdge(own);
    try {
      const recipient = randomUUID();
      await queueEvent(own, ACCOUNT_A, recipient, '{"before":"restart"}');
      const client = openClient(own, edge.port, { recipient, v1: true });
      await client.opened;
      await waitUntil('the queued event', () => client.events.length === 1);

      await own.nats.restart();
      await waitUntil(
        'the live path back',
        async () => {
          try {
            await sendLive(own.nc, ACCOUNT_A, recipient, '{"after":"restart"}', randomUUID(), 200);
            return true;
          } catch {
            return false;
          }
        },
        20_000,
      );
      const id = randomUUID();
      await queueEvent(own, ACCOUNT_A, recipient, '{"queued":"after restart"}', id);
      await waitUntil(
        'the event queued after the restart',
        () => client.events.some((e) => e.id === id),
        20_000,
      );
      expect(client.ws.readyState).toBe(client.ws.OPEN);
      client.ws.close();
    } finally {
      await edge.close();
      await own.stop();
    }
  });
});

describe('graceful shutdown', () => {
  it('closes sockets with 1001 and nakks unacked queued events, which a new edge delivers at once', async () => {
    // A 30 s ack_wait: receiving the events within the 10 s wait below proves they were nakked.
    const LONG_ACK_WAIT = { ACK_WAIT_MS: '30000' };
    const first: RunningEdge = await startEdge(stack, LONG_ACK_WAIT);
    const recipient = randomUUID();
    const ids: string[] = [];
    for (let n = 0; n < 10; n++) {
      const id = randomUUID();
      ids.push(id);
      await queueEvent(stack, ACCOUNT_A, recipient, `{"n":${n}}`, id);
    }
    const unacking = openClient(stack, first.port, { recipient, v1: true, autoAck: false });
    const other = openClient(stack, first.port);
    await Promise.all([unacking.opened, other.opened]);
    await waitUntil('events in flight', () => unacking.events.length === 10);
    expect((await consumerInfo(stack, ACCOUNT_A, recipient))?.num_ack_pending).toBe(10);

    await first.close();
    expect((await unacking.closed).code).toBe(1001);
    expect((await other.closed).code).toBe(1001);
    await expect(sendLive(stack.nc, ACCOUNT_A, recipient, '{}')).rejects.toMatchObject({
      code: '503',
    });

    const second = await startEdge(stack, LONG_ACK_WAIT);
    try {
      const again = openClient(stack, second.port, { recipient, v1: true });
      await again.opened;
      await waitUntil('the nakked events', () => again.events.length === 10);
      expect(again.events.map((e) => e.id)).toEqual(ids);
      again.ws.close();
    } finally {
      await second.close();
    }
  });
});

describe('main.ts', () => {
  const root = fileURLToPath(new URL('../../../', import.meta.url));

  function run(env: Record<string, string>): {
    proc: ChildProcess;
    lines: string[];
    stderr: () => string;
    exited: Promise<number | null>;
  } {
    const proc = spawn(
      process.execPath,
      ['--conditions=herald-source', '--import', 'tsx', 'services/socket-edge/src/main.ts'],
      {
        cwd: root,
        env: { PATH: process.env.PATH ?? '', ...env },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    const lines: string[] = [];
    let err = '';
    createInterface({ input: proc.stdout as NodeJS.ReadableStream }).on('line', (l) =>
      lines.push(l),
    );
    proc.stderr?.on('data', (c: Buffer) => {
      err += c.toString();
    });
    const exited = new Promise<number | null>((resolve) =>
      proc.once('exit', (code) => resolve(code)),
    );
    return { proc, lines, stderr: () => err, exited };
  }

  it('logs one "listening" line with the port, never logs an api key, and exits 0 on SIGTERM', async () => {
    const child = run({
      ...stack.nats.env('socket-edge'),
      TLS_CERT_FILE: stack.certs.certFile,
      TLS_KEY_FILE: stack.certs.keyFile,
      HOST: '127.0.0.1',
      PORT: '0',
      LOG_LEVEL: 'debug',
    });
    try {
      await waitUntil(
        'the listening line',
        () => child.lines.some((l) => l.includes('"listening"')),
        20_000,
      );
      const listening = child.lines
        .map((l) => JSON.parse(l) as { msg: string; port?: number })
        .filter((l) => l.msg === 'listening');
      expect(listening).toHaveLength(1);
      const port = listening[0]?.port ?? 0;
      expect(port).toBeGreaterThan(0);

      expect((await expectRefusal(stack, port, { apiKey: keys.unknown })).status).toBe(401);
      const client = openClient(stack, port, { v1: true });
      await client.opened;
      client.ws.close();
      await client.closed;

      child.proc.kill('SIGTERM');
      expect(await child.exited).toBe(0);
      const output = child.lines.join('\n') + child.stderr();
      expect(output).not.toContain(keys.unknown);
      expect(output).not.toContain(keys.mobileA);
      expect(output).toContain('connect refused');
    } finally {
      child.proc.kill('SIGKILL');
    }
  });

  it('exits 1 naming every bad variable', async () => {
    const child = run({ PORT: 'abc', MAX_SOCKETS: '0', TLS_DISABLED: 'true' });
    expect(await child.exited).toBe(1);
    expect(child.stderr()).toMatch(/PORT/);
    expect(child.stderr()).toMatch(/MAX_SOCKETS/);
  });
});
