/**
 * BASELINE: a raw `ws` server over TLS, what a team would write without Herald. It holds sockets
 * by recipient and offers the same jobs the Herald scenarios exercise:
 * - `POST /push {recipient, payload}`: write the payload to the recipient's sockets, answer 200
 *   once written (as Herald's edge replies after its write);
 * - `POST /push/batch {events: [{recipient, payload}]}`: the same for each event, answered once
 *   every write is done with one result per event (200 written, 202 no socket), like
 *   Herald's `POST /notify/batch`;
 * - `POST /blast {payload, durationMs, maxCount}`: push the payload round-robin to every socket as
 *   fast as the sockets drain (the one-way ceiling of figure 2);
 * - every frame a client sends is echoed back (the RTT floor of figure 1);
 * - a NATS request on `floorPushSubject(recipient)` writes its data to the recipient's sockets and
 *   is answered once written: the socket half of figure 2's design floor (design-floor-relay.ts);
 * - a socket opened with `stream` and `subject` gets that queue subject's stored events
 *   (figure 4's design floor, `drainQueue`).
 */
import type { IncomingMessage } from 'node:http';
import { setImmediate as yieldToLoop } from 'node:timers/promises';
import { AckPolicy, connect, DeliverPolicy, type Msg } from 'nats';
import { WebSocket, WebSocketServer } from 'ws';
import {
  baselineEnv,
  createTlsServer,
  exitOnSignal,
  json,
  listening,
  readBody,
} from './http-util.js';
import { FLOOR_OFFLINE, FLOOR_PUSH_SUBJECTS, FLOOR_SENT } from './names.js';

const env = baselineEnv();
const nc = env.natsUrl
  ? await connect({
      servers: env.natsUrl,
      ...env.natsLogin,
      name: 'bench-raw-ws',
      noAsyncTraces: true,
    })
  : undefined;
const jsm = await nc?.jetstreamManager();
const sockets = new Map<string, Set<WebSocket>>();
const all = new Set<WebSocket>();
const alive = new WeakSet<WebSocket>();
/** Past this many buffered bytes a blast waits for the socket to drain (the edge's slow-reader cap is 1 MiB). */
const BLAST_HIGH_WATER = 256 * 1024;

const server = createTlsServer(env, (req, res) => {
  if (req.method === 'GET' && req.url === '/readyz') return json(res, 200, { ok: true });
  if (req.method === 'POST' && req.url === '/push') return void push(req, res);
  if (req.method === 'POST' && req.url === '/push/batch') return void pushBatch(req, res);
  if (req.method === 'POST' && req.url === '/blast') return void blast(req, res);
  json(res, 404, { error: 'not found' });
});

async function push(req: IncomingMessage, res: Parameters<typeof json>[0]) {
  try {
    const body = JSON.parse(await readBody(req)) as { recipient: string; payload: unknown };
    const sent = sendToRecipient(body.recipient, JSON.stringify(body.payload), () =>
      json(res, 200, { status: 'sent' }),
    );
    if (!sent) json(res, 202, { status: 'offline' });
  } catch (err) {
    json(res, 400, { error: String(err) });
  }
}

async function pushBatch(req: IncomingMessage, res: Parameters<typeof json>[0]) {
  try {
    const { events } = JSON.parse(await readBody(req)) as {
      events: Array<{ recipient: string; payload: unknown }>;
    };
    const results = await Promise.all(
      events.map(
        (e) =>
          new Promise<{ http_status: number }>((resolve) => {
            const sent = sendToRecipient(e.recipient, JSON.stringify(e.payload), () =>
              resolve({ http_status: 200 }),
            );
            if (!sent) resolve({ http_status: 202 });
          }),
      ),
    );
    json(res, 200, { results });
  } catch (err) {
    json(res, 400, { error: String(err) });
  }
}

/** One wildcard subscription, not one per socket, so figure 5's per-connection memory is unchanged. */
function floorPush(msg: Msg) {
  const recipient = msg.subject.slice(msg.subject.lastIndexOf('.') + 1);
  const sent = sendToRecipient(recipient, msg.string(), () => msg.respond(FLOOR_SENT));
  if (!sent) msg.respond(FLOOR_OFFLINE);
}

/**
 * Writes `text` to every socket of the recipient and calls `written` once all took it; false,
 * with nothing written, when the recipient has no socket here.
 */
function sendToRecipient(recipient: string, text: string, written: () => void): boolean {
  const targets = sockets.get(recipient);
  if (!targets || targets.size === 0) return false;
  let pending = targets.size;
  for (const ws of targets) {
    ws.send(text, () => {
      if (--pending === 0) written();
    });
  }
  return true;
}

async function blast(req: IncomingMessage, res: Parameters<typeof json>[0]) {
  const body = JSON.parse(await readBody(req)) as {
    payload: string;
    durationMs: number;
    maxCount: number;
  };
  const targets = [...all];
  const start = performance.now();
  let sent = 0;
  let cursor = 0;
  if (targets.length > 0) {
    while (sent < body.maxCount && performance.now() - start < body.durationMs) {
      for (let i = 0; i < 512 && sent < body.maxCount; i++) {
        const ws = targets[cursor++ % targets.length] as WebSocket;
        // A backed-up socket is skipped, not waited on, so one slow reader cannot stall the rest.
        if (ws.readyState === WebSocket.OPEN && ws.bufferedAmount < BLAST_HIGH_WATER) {
          ws.send(body.payload);
          sent++;
        }
      }
      await yieldToLoop();
    }
  }
  json(res, 200, { sent, elapsedMs: performance.now() - start });
}

const wss = new WebSocketServer({ noServer: true });
server.on('upgrade', (req, socket, head) => {
  const url = new URL(req.url ?? '/', 'https://x');
  const recipient = url.searchParams.get('recipient');
  if (url.pathname !== '/ws/connect' || !recipient) {
    socket.end('HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n');
    return;
  }
  wss.handleUpgrade(req, socket, head, (ws) => {
    const set = sockets.get(recipient) ?? new Set<WebSocket>();
    sockets.set(recipient, set);
    set.add(ws);
    all.add(ws);
    alive.add(ws);
    ws.on('pong', () => alive.add(ws));
    ws.on('message', (data, isBinary) => ws.send(data, { binary: isBinary }));
    ws.on('close', () => {
      set.delete(ws);
      if (set.size === 0) sockets.delete(recipient);
      all.delete(ws);
    });
    ws.on('error', () => ws.terminate());
    const stream = url.searchParams.get('stream');
    const subject = url.searchParams.get('subject');
    if (stream && subject) {
      drainQueue(ws, recipient, stream, subject).catch((err: unknown) => {
        process.stderr.write(`queue drain of ${recipient}: ${String(err)}\n`);
        ws.close(1011);
      });
    }
  });
});

nc?.subscribe(FLOOR_PUSH_SUBJECTS, { callback: (_err, msg) => floorPush(msg) });
await nc?.flush();

/**
 * The socket half of figure 4's design floor: the recipient's stored events, from a durable pull
 * consumer of its own made at connect (Herald's consumer settings: explicit acks, 64 in flight,
 * state in memory, pulls of 32 topped up at half), each written to the socket and acked once
 * written. No event frame, no client ack, no order or slow-reader care: what Herald's drain does
 * less of cannot be cheaper.
 */
async function drainQueue(ws: WebSocket, recipient: string, stream: string, subject: string) {
  if (!nc || !jsm) throw new Error('NATS_URL is required for a queue drain');
  const durable = `floor_${recipient}`;
  await jsm.consumers.add(stream, {
    durable_name: durable,
    filter_subject: subject,
    ack_policy: AckPolicy.Explicit,
    deliver_policy: DeliverPolicy.All,
    max_ack_pending: 64,
    mem_storage: true,
  });
  const consumer = await nc.jetstream().consumers.get(stream, durable);
  const messages = await consumer.consume({
    max_messages: 32,
    threshold_messages: 16,
    callback: (m) => ws.send(m.data, { binary: false }, () => m.ack()),
  });
  const stop = () => {
    messages.stop();
    void jsm.consumers.delete(stream, durable).catch(() => false);
  };
  if (ws.readyState === WebSocket.OPEN) ws.once('close', stop);
  else stop();
}

const heartbeat = setInterval(() => {
  for (const ws of all) {
    if (!alive.has(ws)) {
      ws.terminate();
      continue;
    }
    alive.delete(ws);
    ws.ping();
  }
}, env.heartbeatMs);

await listening(server, env);
exitOnSignal(() => {
  void nc?.close();
  clearInterval(heartbeat);
  for (const ws of all) ws.terminate();
  server.close();
});
