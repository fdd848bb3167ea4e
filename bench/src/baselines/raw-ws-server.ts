/**
 * BASELINE: a raw `ws` server over TLS, what a team would write without Herald. It holds sockets
 * by recipient and offers the same jobs the Herald scenarios exercise:
 * - `POST /push {recipient, payload}`: write the payload to the recipient's sockets, answer 200
 *   once written (as Herald's edge replies after its write);
 * - `POST /blast {payload, durationMs, maxCount}`: push the payload round-robin to every socket as
 *   fast as the sockets drain (the one-way ceiling of figure 2);
 * - every frame a client sends is echoed back (the RTT floor of figure 1).
 */
import type { IncomingMessage } from 'node:http';
import { setImmediate as yieldToLoop } from 'node:timers/promises';
import { WebSocket, WebSocketServer } from 'ws';
import {
  baselineEnv,
  createTlsServer,
  exitOnSignal,
  json,
  listening,
  readBody,
} from './http-util.js';

const env = baselineEnv();
const sockets = new Map<string, Set<WebSocket>>();
const all = new Set<WebSocket>();
const alive = new WeakSet<WebSocket>();
/** Past this many buffered bytes a blast waits for the socket to drain (the edge's slow-reader cap is 1 MiB). */
const BLAST_HIGH_WATER = 256 * 1024;

const server = createTlsServer(env, (req, res) => {
  if (req.method === 'GET' && req.url === '/readyz') return json(res, 200, { ok: true });
  if (req.method === 'POST' && req.url === '/push') return void push(req, res);
  if (req.method === 'POST' && req.url === '/blast') return void blast(req, res);
  json(res, 404, { error: 'not found' });
});

async function push(req: IncomingMessage, res: Parameters<typeof json>[0]) {
  try {
    const body = JSON.parse(await readBody(req)) as { recipient: string; payload: unknown };
    const targets = sockets.get(body.recipient);
    if (!targets || targets.size === 0) return json(res, 202, { status: 'offline' });
    const text = JSON.stringify(body.payload);
    let pending = targets.size;
    for (const ws of targets) {
      ws.send(text, () => {
        if (--pending === 0) json(res, 200, { status: 'sent' });
      });
    }
  } catch (err) {
    json(res, 400, { error: String(err) });
  }
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
  });
});

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
  clearInterval(heartbeat);
  for (const ws of all) ws.terminate();
  server.close();
});
