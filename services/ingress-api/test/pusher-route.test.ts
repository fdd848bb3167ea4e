import http from 'node:http';
import { bodyMd5, requestSignature } from '@herald/access';
import {
  PUSHER_APP_SUBJECT,
  type PusherApp,
  type PusherAppReply,
  pusherSubjects,
  type VerifiedKey,
} from '@herald/proto';
import { eventually } from '@herald/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ACCOUNT_A, key, WEB_ORIGIN } from './support/auth-responder.js';
import { type IngressFixture, startIngressFixture } from './support/fixture.js';
import { request } from './support/http.js';
import { collect } from './support/pusher.js';

/**
 * The Pusher HTTP API's route in process (issue 41), on a real nats-server with a stand-in for
 * auth's rt.auth.pusher: what depends on the bound key (scope, a web key's Origin, its rate) and
 * on the source's failed authentications.
 */

let fx: IngressFixture;
const asked: string[] = [];
const apps = new Map<string, { app: PusherApp; key: VerifiedKey }>();

beforeAll(async () => {
  fx = await startIngressFixture({ AUTH_FAIL_LIMIT: '3', KEY_CACHE_TTL_MS: '0' });
  fx.peer.subscribe(PUSHER_APP_SUBJECT, {
    callback: (_err, msg) => {
      const { app_id } = JSON.parse(new TextDecoder().decode(msg.data)) as { app_id: string };
      asked.push(app_id);
      const found = apps.get(app_id);
      const reply: PusherAppReply = found
        ? { v: 1, ok: true, ...found }
        : { v: 1, ok: false, error: { code: 'invalid_api_key', message: 'unknown app' } };
      msg.respond(JSON.stringify(reply));
    },
  });
  await fx.peer.flush();
});
afterAll(async () => {
  await fx?.stop();
});

let nextId = 1_000_000_000;
function appWith(over: Partial<VerifiedKey> = {}): PusherApp {
  const app_id = String(nextId++);
  const app: PusherApp = {
    app_id,
    key: app_id.padStart(20, '0'),
    secret: `secret-${app_id}`,
    account_id: ACCOUNT_A,
    key_id: `key-${app_id}`,
    user_ids: 'uuid',
    user_channel: null,
  };
  apps.set(app_id, { app, key: key(app.key_id, over) });
  return app;
}

function signed(
  app: PusherApp,
  body: string,
  o: { secret?: string; localAddress?: string; agent?: http.Agent } = {},
) {
  const path = `/apps/${app.app_id}/events`;
  const params: Record<string, string> = {
    auth_key: app.key,
    auth_timestamp: String(Math.floor(Date.now() / 1000)),
    auth_version: '1.0',
    body_md5: bodyMd5(body),
  };
  params.auth_signature = requestSignature(o.secret ?? app.secret, 'POST', path, params);
  return request(fx.baseUrl, {
    path: `${path}?${new URLSearchParams(params)}`,
    body,
    ...(o.localAddress ? { localAddress: o.localAddress } : {}),
    ...(o.agent ? { agent: o.agent } : {}),
  });
}

const NEWS = JSON.stringify({ name: 'greet', data: 'x', channels: ['news'] });

describe('the bound key', () => {
  it("asks no Origin of a web key (the app's server signs), and publishes the fan-out", async () => {
    const app = appWith({ client: 'web', domain: WEB_ORIGIN });
    const seen = await collect(fx.peer, pusherSubjects.channel(ACCOUNT_A, app.app_id, 'news'));
    const res = await signed(app, NEWS);
    expect([res.status, res.text]).toEqual([200, '{}']);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    await eventually(() => seen.messages.length > 0, 'the fan-out message', 30_000);
    expect(seen.messages).toEqual([{ v: 1, event: 'greet', channel: 'news', data: 'x' }]);
    seen.stop();
  });

  it('refuses a subscribe-only key 403 scope_denied, as plain text', async () => {
    const res = await signed(appWith({ scope: 'subscribe' }), NEWS);
    expect(res.status).toBe(403);
    expect(res.headers['content-type']).toMatch(/^text\/plain/);
    expect(res.text).toMatch(/^api_key is a subscribe key/);
  });

  it("takes one rate token per request's fan-out, whatever its channels, and refuses past it", async () => {
    const app = appWith({
      limits: { connections: 10, dispatch_rate: 1, dispatch_burst: 5, queue_per_recipient: 10 },
    });
    const five = JSON.stringify({ name: 'e', data: 'x', channels: ['a', 'b', 'c', 'd', 'e'] });
    // Per channel, the first would take the whole burst and the second be refused.
    expect((await signed(app, five)).status).toBe(200);
    expect((await signed(app, five)).status).toBe(200);
    let refused: Awaited<ReturnType<typeof signed>> | undefined;
    for (let i = 0; i < 50 && !refused; i++) {
      const res = await signed(app, five);
      if (res.status !== 200) refused = res;
    }
    expect(refused?.status).toBe(403);
    expect(refused?.headers['content-type']).toMatch(/^text\/plain/);
    expect(refused?.headers['retry-after']).toMatch(/^\d+$/);
  });
});

describe("the source's failed authentications", () => {
  it('asks auth nothing for an app id that cannot be one', async () => {
    asked.length = 0;
    const res = await request(fx.baseUrl, { path: '/apps/abc/events?auth_key=x', body: NEWS });
    expect(res.status).toBe(401);
    expect(res.text).toMatch(/^Unknown app_id "abc"/);
    expect(asked).toEqual([]);
  });

  it('refuses a source after AUTH_FAIL_LIMIT bad signatures, even a good one, and closes', async () => {
    const app = appWith();
    // One connection from one address: the refusal is told on it, then it is closed.
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    const from = { localAddress: '127.0.0.9', agent };
    for (let i = 0; i < 3; i++) {
      expect((await signed(app, NEWS, { ...from, secret: 'wrong' })).status).toBe(401);
    }
    const res = await signed(app, NEWS, from);
    expect(res.status).toBe(403);
    expect(res.headers.connection).toBe('close');
    expect(res.headers['retry-after']).toMatch(/^\d+$/);
    expect(res.text).toMatch(/^Too many requests/);
    agent.destroy();
    // A new connection from it is dropped before HTTP; another source is not held to it.
    await expect(signed(app, NEWS, { localAddress: '127.0.0.9' })).rejects.toThrow();
    expect((await signed(app, NEWS, { localAddress: '127.0.0.10' })).status).toBe(200);
  });
});

describe('the two ways in', () => {
  /** A request signed for `path` exactly as sent. */
  function signedAt(app: PusherApp, path: string, body: string) {
    const params: Record<string, string> = {
      auth_key: app.key,
      auth_timestamp: String(Math.floor(Date.now() / 1000)),
      auth_version: '1.0',
      body_md5: bodyMd5(body),
    };
    params.auth_signature = requestSignature(app.secret, 'POST', path, params);
    return request(fx.baseUrl, { path: `${path}?${new URLSearchParams(params)}`, body });
  }
  const answer = (r: Awaited<ReturnType<typeof signedAt>>) => ({
    status: r.status,
    type: r.headers['content-type'],
    text: r.text,
    status_header: r.headers['x-herald-status'],
    ids: String(r.headers['x-herald-id'] ?? '').split(',').length,
  });

  it("answers alike from the listener's own match and from koa's router (a trailing slash)", async () => {
    const app = appWith();
    const user = '6f1c2a3b-4d5e-4f60-8a7b-9c0d1e2f3a4b';
    const body = JSON.stringify({ name: 'note', data: '{"n":1}' });
    const direct = await signedAt(app, `/apps/${app.app_id}/users/${user}/events`, body);
    const viaKoa = await signedAt(app, `/apps/${app.app_id}/users/${user}/events/`, body);
    expect(answer(direct)).toEqual({
      status: 200,
      type: 'application/json; charset=utf-8',
      text: '{}',
      status_header: 'queued',
      ids: 1,
    });
    expect(answer(viaKoa)).toEqual(answer(direct));
    // A refusal too: the same plain text either way, the path as sent in the expected signature.
    const bad = JSON.stringify({ name: 'note' });
    const refusedDirect = await signedAt(app, `/apps/${app.app_id}/users/${user}/events`, bad);
    const refusedKoa = await signedAt(app, `/apps/${app.app_id}/users/${user}/events/`, bad);
    expect(refusedDirect.status).toBe(400);
    expect(refusedDirect.headers['content-type']).toBe('text/plain; charset=utf-8');
    expect([refusedKoa.status, refusedKoa.headers['content-type'], refusedKoa.text]).toEqual([
      refusedDirect.status,
      refusedDirect.headers['content-type'],
      refusedDirect.text,
    ]);
  });

  it('leaves every other method to koa, which answers as for any unknown route', async () => {
    const app = appWith();
    const res = await request(fx.baseUrl, { method: 'GET', path: `/apps/${app.app_id}/events` });
    expect(res.status).toBe(405);
    expect(res.json?.error).toBeDefined();
  });
});
