import { randomUUID } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** A request the device-route server received. */
export type DeviceRequest = {
  method: string;
  path: string;
  query: Record<string, string>;
  body: unknown;
};

const FIELDS = ['api_key', 'recipient', 'client', 'device', 'kind', 'token', 'recipient_token'];
const err = (code: string, message: string, field?: string) => ({
  error: { code, message, ...(field ? { field } : {}) },
});

/**
 * A real HTTP server holding ingress's device registration contract (issue 40, docs/api.md "Push"),
 * which the server side builds on another branch: `POST /push/subscriptions` with
 * `{"api_key","recipient","client"?,"device"?,"kind":"fcm"|"apns","token","recipient_token"?}` and
 * no other field answers 201 `{"id"}` (200 and the same id for a known kind and token), `DELETE
 * /push/subscriptions/{id}?api_key&recipient[&token]` 204 (404 for an unknown id), each refusal
 * in Herald's error JSON. `requireToken` refuses a call without a recipient token; `hang` never
 * answers; `garble` answers as a proxy would. Records every request.
 */
export async function serveDeviceRoutes() {
  const state = {
    requireToken: false,
    hang: false,
    garble: false,
    requests: [] as DeviceRequest[],
    ids: new Map<string, string>(),
  };
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString();
      const query = Object.fromEntries(url.searchParams);
      const body = text ? (JSON.parse(text) as Record<string, unknown>) : undefined;
      state.requests.push({ method: req.method ?? '', path: url.pathname, query, body });
      if (state.hang) return;
      const json = (status: number, answer?: object) =>
        void res
          .writeHead(status, answer ? { 'content-type': 'application/json' } : {})
          .end(answer ? JSON.stringify(answer) : undefined);
      if (state.garble)
        return void res.writeHead(502, { 'content-type': 'text/html' }).end('<h1>Bad gateway</h1>');
      if (req.method === 'POST' && url.pathname === '/push/subscriptions') {
        if (req.headers['content-type'] !== 'application/json')
          return json(415, err('unsupported_media_type', 'send application/json'));
        const b = body ?? {};
        const extra = Object.keys(b).find((k) => !FIELDS.includes(k));
        if (extra) return json(400, err('invalid_field', `unknown field ${extra}`, extra));
        if (typeof b.api_key !== 'string') return json(401, err('missing_api_key', 'no key'));
        if (typeof b.recipient !== 'string')
          return json(400, err('missing_field', 'r', 'recipient'));
        if (b.kind !== 'fcm' && b.kind !== 'apns')
          return json(400, err('invalid_field', 'k', 'kind'));
        if (typeof b.token !== 'string' || b.token === '')
          return json(400, err('missing_field', 'the device token', 'token'));
        if (state.requireToken && typeof b.recipient_token !== 'string')
          return json(
            401,
            err('token_required', 'this key requires a recipient token', 'recipient_token'),
          );
        const known = state.ids.get(`${b.kind}:${b.token}`);
        const id = known ?? randomUUID();
        state.ids.set(`${b.kind}:${b.token}`, id);
        return json(known ? 200 : 201, { id });
      }
      const del = /^\/push\/subscriptions\/([\w-]+)$/.exec(url.pathname);
      if (req.method === 'DELETE' && del) {
        if (!query.api_key || !query.recipient)
          return json(400, err('missing_field', 'api_key and recipient', 'recipient'));
        if (state.requireToken && !query.token)
          return json(401, err('token_required', 'this key requires a recipient token', 'token'));
        if (![...state.ids.values()].includes(del[1] as string))
          return json(404, err('not_found', 'no such subscription', 'id'));
        return json(204);
      }
      json(404, err('not_found', 'no such route'));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    state,
    baseUrl: `http://127.0.0.1:${port}`,
    close: () => {
      server.closeAllConnections();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
