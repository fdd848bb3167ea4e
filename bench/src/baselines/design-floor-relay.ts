/**
 * BASELINE: the floor of DESIGN.md's online path, with none of Herald's own work. Herald's live
 * push crosses a dispatch service, nats-server and a socket service in three processes; this is
 * the least code that shape can be written in, so figure 2 can say how much of Herald's cost is
 * the shape and how much is Herald:
 * - `POST /notify` (node's https listener, no framework) and requests on `FLOOR_DISPATCH_SUBJECT`
 *   take Herald's notify body, validate it with the same kind of zod schema, send the payload as
 *   one NATS request to `floorPushSubject(recipient)`, and answer 200 when the socket server
 *   replies that it wrote the frame (404 when it has no socket for the recipient);
 * - `POST /notify/batch` takes Herald's batch body and relays every event at once the same way,
 *   answering one result per event;
 * - the raw ws server (raw-ws-server.ts) answers those requests: it writes the payload to the
 *   recipient's sockets and replies once written.
 * What it leaves out, and Herald does not: API keys, plans and rate limits, event ids, the
 * client's proof of receipt, the JetStream fallback, delivery status, metrics and logs.
 */
import type http from 'node:http';
import { connect, type NatsConnection } from 'nats';
import { z } from 'zod';
import {
  baselineEnv,
  createTlsServer,
  exitOnSignal,
  json,
  listening,
  readBody,
} from './http-util.js';
import { NotifyBody } from './koa-jetstream-app.js';
import { FLOOR_DISPATCH_SUBJECT, FLOOR_SENT, floorPushSubject } from './names.js';

/** How long the relay waits for the socket server, like ingress's live-push timeout. */
const PUSH_TIMEOUT_MS = 5000;

/** Herald's batch body, validated the way a zod user would write it. */
const NotifyBatchBody = z.object({
  api_key: z.string().min(1),
  client: z.enum(['web', 'mobile']),
  events: z
    .array(z.object({ recipient: z.uuid(), payload: z.unknown() }))
    .min(1)
    .max(1000),
});

type Outcome =
  | { status: 200; body: { status: 'sent' } | { results: Array<{ http_status: number }> } }
  | { status: 400 | 404; body: unknown };

/** A body parsed and validated, or the 400 that says why not. */
function parse<T>(
  schema: z.ZodType<T>,
  text: string,
): { data: T } | { refused: Outcome & { status: 400 } } {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    return { refused: { status: 400, body: { error: { code: 'invalid_json' } } } };
  }
  const parsed = schema.safeParse(raw);
  return parsed.success
    ? { data: parsed.data }
    : {
        refused: {
          status: 400,
          body: { error: { code: 'invalid_body', message: parsed.error.issues[0]?.message } },
        },
      };
}

/** Sends one payload to the socket server; true once it wrote the frame. */
async function push(nc: NatsConnection, recipient: string, payload: unknown): Promise<boolean> {
  const reply = await nc.request(floorPushSubject(recipient), JSON.stringify(payload), {
    timeout: PUSH_TIMEOUT_MS,
  });
  return reply.string() === FLOOR_SENT;
}

/** Validates one notify body and relays its payload to the socket server. */
async function relay(nc: NatsConnection, text: string): Promise<Outcome> {
  const body = parse(NotifyBody, text);
  if ('refused' in body) return body.refused;
  return (await push(nc, body.data.recipient, body.data.payload))
    ? { status: 200, body: { status: 'sent' } }
    : { status: 404, body: { error: { code: 'offline' } } };
}

/** Validates a batch body and relays every event at once; one result per event. */
async function relayBatch(nc: NatsConnection, text: string): Promise<Outcome> {
  const body = parse(NotifyBatchBody, text);
  if ('refused' in body) return body.refused;
  const results = await Promise.all(
    body.data.events.map(async (e) => ({
      http_status: (await push(nc, e.recipient, e.payload)) ? 200 : 404,
    })),
  );
  return { status: 200, body: { results } };
}

const env = baselineEnv();
if (!env.natsUrl) throw new Error('NATS_URL is required (the bench runner sets it)');
const nc = await connect({
  servers: env.natsUrl,
  ...env.natsLogin,
  name: 'bench-design-floor',
  noAsyncTraces: true,
});

nc.subscribe(FLOOR_DISPATCH_SUBJECT, {
  callback: (_err, msg) => {
    relay(nc, msg.string()).then(
      (out) => msg.respond(JSON.stringify({ http_status: out.status, ...(out.body as object) })),
      (err: unknown) => msg.respond(JSON.stringify({ http_status: 503, error: String(err) })),
    );
  },
});

const server = createTlsServer(env, (req: http.IncomingMessage, res: http.ServerResponse) => {
  if (req.method === 'GET' && req.url === '/readyz') return json(res, 200, { ok: true });
  const route =
    req.method !== 'POST'
      ? undefined
      : req.url === '/notify'
        ? relay
        : req.url === '/notify/batch'
          ? relayBatch
          : undefined;
  if (!route) return json(res, 404, { error: 'not found' });
  readBody(req)
    .then((text) => route(nc, text))
    .then(
      (out) => json(res, out.status, out.body),
      (err: unknown) => json(res, 503, { error: String(err) }),
    );
});
await nc.flush();
await listening(server, env);
exitOnSignal(() => {
  server.close();
  void nc.close();
});
