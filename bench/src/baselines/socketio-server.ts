/**
 * BASELINE: a Socket.IO 4.8 server over TLS doing Herald's job the way its documentation shows:
 * each socket joins a room named after its recipient, and `POST /push {recipient, payload}` is
 * `io.to(recipient).emit('event', payload)`; `POST /push/batch {events: [{recipient, payload}]}`
 * emits each event the same way and answers one result per event, like Herald's
 * `POST /notify/batch`. Default options (heartbeat, no compression), except
 * that the client code connects with the websocket transport only (no long-polling first), the
 * fastest setting for Socket.IO.
 */
import { Server } from 'socket.io';
import {
  baselineEnv,
  createTlsServer,
  exitOnSignal,
  json,
  listening,
  readBody,
} from './http-util.js';

const env = baselineEnv();

const server = createTlsServer(env, (req, res) => {
  // Socket.IO answers its own path (/socket.io/) before this handler sees the request.
  if (req.method === 'GET' && req.url === '/readyz') return json(res, 200, { ok: true });
  if (req.method === 'POST' && req.url === '/push') {
    readBody(req).then(
      (text) => {
        const body = JSON.parse(text) as { recipient: string; payload: unknown };
        io.to(body.recipient).emit('event', body.payload);
        json(res, 200, { status: 'sent' });
      },
      (err: unknown) => json(res, 400, { error: String(err) }),
    );
    return;
  }
  if (req.method === 'POST' && req.url === '/push/batch') {
    readBody(req).then(
      (text) => {
        const { events } = JSON.parse(text) as {
          events: Array<{ recipient: string; payload: unknown }>;
        };
        for (const e of events) io.to(e.recipient).emit('event', e.payload);
        json(res, 200, { results: events.map(() => ({ http_status: 200 })) });
      },
      (err: unknown) => json(res, 400, { error: String(err) }),
    );
    return;
  }
  json(res, 404, { error: 'not found' });
});

const io = new Server(server, { serveClient: false });
io.on('connection', (socket) => {
  const recipient = socket.handshake.query.recipient;
  if (typeof recipient !== 'string' || recipient === '') {
    socket.disconnect(true);
    return;
  }
  void socket.join(recipient);
});

await listening(server, env);
exitOnSignal(() => {
  io.close();
});
