import https from 'node:https';
import { hashKey, KeyVerifier } from '@herald/access';
import {
  closeServer,
  createDb,
  createLogger,
  createServer,
  listen,
  startOpsServer,
} from '@herald/kit';
import { AuthVerifyReply, HeraldError, subjects } from '@herald/proto';
import { freePort, makeCerts, type TestCerts } from '@herald/testkit';
import { type Kysely, sql } from 'kysely';
import { connect, JSONCodec, type NatsConnection } from 'nats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount } from '../src/accounts.js';
import { loadConfig } from '../src/config.js';
import type { AuthDb } from '../src/db-schema.js';
import { type AuthService, createAuthService } from '../src/index.js';
import { revokeKey } from '../src/invalidation.js';
import { createApiKey } from '../src/keys/store.js';
import { verifyKeyHash } from '../src/verification.js';
import { FAR_FUTURE, TEST_CATALOGUE } from './catalogue.js';
import { natsOf, type Servers, startServers } from './servers.js';

const logger = createLogger('auth-test', 'silent');
const codec = JSONCodec();

let servers: Servers;
let db: Kysely<AuthDb>;
/** The auth service's connection. */
let authNc: NatsConnection;
/** A caller's connection (ingress or an edge), as in production: a separate client. */
let callerNc: NatsConnection;
let service: AuthService;
let accountId: string;

beforeAll(async () => {
  servers = await startServers({ nats: true });
  db = servers.db;
  const nats = natsOf(servers);
  [authNc, callerNc] = await Promise.all([
    connect(nats.connectOptions('auth')),
    connect(nats.connectOptions()),
  ]);
  const config = loadConfig({
    DATABASE_URL: servers.pg.url,
    TLS_DISABLED: 'true',
    ...nats.env('auth'),
  });
  service = createAuthService(config, { nc: authNc, db, logger, catalogue: TEST_CATALOGUE });
  await authNc.flush();
  // On a paid plan, so its Live keys verify; plan rules have their own tests (plans.test.ts).
  accountId = (
    await createAccount(
      db,
      { email: 'verify@example.com' },
      { plan: { id: 'hobby' }, period_end: FAR_FUTURE },
    )
  ).id;
});

afterAll(async () => {
  await service?.close();
  await Promise.all([authNc?.close(), callerNc?.close()]);
  await servers?.stop();
});

/** A fresh account on a paid plan: each may hold only one Test key. */
async function paidAccount(): Promise<string> {
  const email = `verify-${crypto.randomUUID()}@example.com`;
  const plan = { plan: { id: 'hobby' }, period_end: FAR_FUTURE };
  return (await createAccount(db, { email }, plan)).id;
}

function deps() {
  return { db, catalogue: TEST_CATALOGUE };
}

function verifier(ttlMs = 60_000): KeyVerifier {
  return new KeyVerifier(callerNc, logger, { ttlMs });
}

async function refusal(promise: Promise<unknown>): Promise<HeraldError> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(err instanceof HeraldError)) throw new Error(`expected a HeraldError, got ${String(err)}`);
  return err;
}

describe('rt.auth.verify through the kit KeyVerifier', () => {
  it('verifies a valid key', async () => {
    const key = await createApiKey(db, accountId, {
      kind: 'test',
      client: 'web',
      domain: 'https://App.example.com',
    });
    const v = verifier();
    try {
      expect(await v.verify(key.key)).toEqual({
        id: key.id,
        account_id: accountId,
        kind: 'test',
        client: 'web',
        domain: 'https://app.example.com',
        expires_at: key.expires_at?.getTime(),
        plan: 'hobby',
        plan_until: FAR_FUTURE.getTime(),
        limits: TEST_CATALOGUE.test_key_limits,
        scope: 'both',
        require_token: false,
        inbox_days: null,
        webhook_payload: false,
      });
    } finally {
      v.close();
    }
  });

  it("asks auth again ahead of a verification's expiry, so no verify waits for it", async () => {
    const key = await createApiKey(db, accountId, { kind: 'live', client: 'mobile' });
    // Every rt.auth.verify request the verifier sends, seen beside auth's own subscription.
    let asked = 0;
    const watch = callerNc.subscribe(subjects.authVerify, { callback: () => asked++ });
    await callerNc.flush();
    const v = verifier(800);
    try {
      await v.verify(key.key);
      await callerNc.flush();
      expect(asked).toBe(1);
      // Past 3/4 of the TTL: answered from the cache at once, and auth asked in the background.
      await new Promise((r) => setTimeout(r, 650));
      expect((await v.verify(key.key)).id).toBe(key.id);
      await new Promise((r) => setTimeout(r, 100));
      await callerNc.flush();
      expect(asked).toBe(2);
      // Past the first answer's TTL: the refreshed answer serves, with no request.
      await new Promise((r) => setTimeout(r, 150));
      expect((await v.verify(key.key)).id).toBe(key.id);
      await callerNc.flush();
      expect(asked).toBe(2);
    } finally {
      watch.unsubscribe();
      v.close();
    }
  });

  it('does not cache an answer asked for before an invalidation', async () => {
    const key = await createApiKey(db, accountId, { kind: 'live', client: 'mobile' });
    const v = verifier();
    try {
      const first = v.verify(key.key);
      // The invalidation arrives while the question is out: its answer may predate it.
      v.invalidate({ v: 1, key_id: key.id, reason: 'revoked' });
      expect((await first).id).toBe(key.id);
      expect(v.size).toBe(0);
    } finally {
      v.close();
    }
  });

  it('refuses an unknown key with invalid_api_key and a fix', async () => {
    const v = verifier();
    try {
      const err = await refusal(v.verify('hk_live_not-a-key-anyone-issued'));
      expect(err.code).toBe('invalid_api_key');
      expect(err.message).toMatch(/create a new key/);
    } finally {
      v.close();
    }
  });

  it('refuses a revoked key with key_revoked', async () => {
    const key = await createApiKey(db, accountId, { kind: 'live', client: 'mobile' });
    await revokeKey({ db, nc: authNc }, key.id);
    const v = verifier();
    try {
      const err = await refusal(v.verify(key.key));
      expect(err.code).toBe('key_revoked');
      expect(err.message).toMatch(/create a new key/);
    } finally {
      v.close();
    }
  });

  it('refuses an expired key with key_expired', async () => {
    // Created 5 hours ago: its 4-hour life ended an hour ago.
    const created = new Date(Date.now() - 5 * 3600_000);
    const key = await createApiKey(
      db,
      await paidAccount(),
      { kind: 'test', client: 'mobile' },
      created,
    );
    const v = verifier();
    try {
      const err = await refusal(v.verify(key.key));
      expect(err.code).toBe('key_expired');
      expect(err.message).toContain(key.expires_at?.toISOString());
    } finally {
      v.close();
    }
  });

  it('evicts a cached verification the moment the key is revoked', async () => {
    const key = await createApiKey(db, accountId, { kind: 'live', client: 'mobile' });
    const v = verifier(10 * 60_000);
    try {
      expect((await v.verify(key.key)).id).toBe(key.id);
      expect(v.size).toBe(1);
      await revokeKey({ db, nc: authNc }, key.id);
      // revokeKey flushed, so the server has routed the broadcast; a round trip on the caller's
      // own connection guarantees the caller has read it (the server keeps per-connection order).
      await callerNc.flush();
      const err = await refusal(v.verify(key.key));
      expect(err.code).toBe('key_revoked');
    } finally {
      v.close();
    }
  });
});

describe('verifyKeyHash', () => {
  it('treats a key as expired from its expiry instant on, not a millisecond before', async () => {
    const key = await createApiKey(db, await paidAccount(), { kind: 'test', client: 'mobile' });
    const expiresAt = key.expires_at?.getTime() ?? 0;
    const before = await verifyKeyHash(deps(), hashKey(key.key), expiresAt - 1);
    expect(before.result).toBe('ok');
    const at = await verifyKeyHash(deps(), hashKey(key.key), expiresAt);
    expect(at.result).toBe('key_expired');
  });

  it('reports revocation over expiry', async () => {
    const key = await createApiKey(
      db,
      await paidAccount(),
      { kind: 'test', client: 'mobile' },
      new Date(0),
    );
    await db
      .updateTable('api_keys')
      .set({ revoked_at: new Date() })
      .where('id', '=', key.id)
      .execute();
    expect((await verifyKeyHash(deps(), hashKey(key.key), Date.now())).result).toBe('key_revoked');
  });
});

describe('the responder under bad input and failures', () => {
  it('answers a malformed request with invalid_api_key and keeps serving', async () => {
    for (const body of ['not json', '{"v":1,"key_hash":"ABC"}', '{"v":2}', 'null']) {
      const msg = await callerNc.request(subjects.authVerify, new TextEncoder().encode(body), {
        timeout: 2000,
      });
      const reply = AuthVerifyReply.parse(codec.decode(msg.data));
      expect(reply).toMatchObject({ ok: false, error: { code: 'invalid_api_key' } });
      expect(reply.ok === false && reply.error.message).toMatch(/malformed/);
    }
    const key = await createApiKey(db, accountId, { kind: 'live', client: 'mobile' });
    const v = verifier();
    try {
      expect((await v.verify(key.key)).id).toBe(key.id);
    } finally {
      v.close();
    }
  });

  it('answers internal when Postgres cannot be reached, and the caller sees unavailable', async () => {
    // A real pool aimed at a port nobody listens on: the failure a database outage produces.
    const deadDb = createDb<AuthDb>(`postgres://postgres@127.0.0.1:${await freePort()}/herald`, 1);
    const nc = await connect(natsOf(servers).connectOptions());
    // Only this instance may answer, so stop the healthy one first and restart it after.
    await service.close();
    const broken = createAuthService(
      loadConfig({ DATABASE_URL: servers.pg.url, TLS_DISABLED: 'true' }),
      { nc, db: deadDb, logger, catalogue: TEST_CATALOGUE },
    );
    try {
      await nc.flush();
      const msg = await callerNc.request(
        subjects.authVerify,
        codec.encode({ v: 1, key_hash: hashKey('hk_live_x') }),
        {
          timeout: 5000,
        },
      );
      expect(AuthVerifyReply.parse(codec.decode(msg.data))).toMatchObject({
        ok: false,
        error: { code: 'internal' },
      });
      const v = verifier();
      const err = await refusal(v.verify('hk_live_y'));
      v.close();
      expect(err.code).toBe('unavailable');
      const metrics = await broken.registry.metrics();
      expect(metrics).toMatch(/herald_auth_verifications_total\{[^}]*result="internal"[^}]*\} 2/);
    } finally {
      await broken.close();
      await nc.close();
      await deadDb.destroy();
      service = createAuthService(
        loadConfig({ DATABASE_URL: servers.pg.url, TLS_DISABLED: 'true' }),
        { nc: authNc, db, logger, catalogue: TEST_CATALOGUE },
      );
      await authNc.flush();
    }
  });

  it('survives Postgres dropping its connections', async () => {
    const key = await createApiKey(db, accountId, { kind: 'live', client: 'mobile' });
    // Warm the pool, then have Postgres kill every other session, as a restart or failover does.
    expect((await verifyKeyHash(deps(), hashKey(key.key), Date.now())).result).toBe('ok');
    const admin = createDb<AuthDb>(servers.pg.url, 1);
    try {
      await sql`select pg_terminate_backend(pid) from pg_stat_activity
                where pid <> pg_backend_pid() and datname = current_database()`.execute(admin);
    } finally {
      await admin.destroy();
    }
    const v = verifier();
    try {
      // The first query after the kill may fail on a dead socket the pool had not noticed yet.
      let verified: string | undefined;
      for (let attempt = 0; attempt < 3 && !verified; attempt++) {
        verified = await v.verify(key.key).then(
          (k) => k.id,
          () => undefined,
        );
      }
      expect(verified).toBe(key.id);
    } finally {
      v.close();
    }
  });
});

describe('ops endpoints over TLS', () => {
  let certs: TestCerts;
  beforeAll(async () => {
    certs = await makeCerts();
  });

  it('serves /healthz and /readyz publicly, the checks and /metrics on the ops listener', async () => {
    const config = loadConfig({
      DATABASE_URL: servers.pg.url,
      TLS_CERT_FILE: certs.certFile,
      TLS_KEY_FILE: certs.keyFile,
      OPS_PORT: '0',
    });
    const server = createServer(config, service.handler);
    const port = await listen(server, 0, '127.0.0.1');
    const ops = await startOpsServer(config, service.opsHandler);
    try {
      const get = (path: string) => fetchTls(port, path, certs.ca);
      expect(await get('/healthz')).toMatchObject({ status: 200 });
      const ready = await get('/readyz');
      expect(ready.status).toBe(200);
      expect(JSON.parse(ready.body)).toEqual({ status: 'ready' });
      expect((await get('/metrics')).status).toBe(404);
      const opsReady = await fetch(`http://127.0.0.1:${ops.port}/readyz`);
      expect(await opsReady.json()).toEqual({
        status: 'ready',
        checks: { nats: true, postgres: true },
      });
      const key = await createApiKey(db, accountId, { kind: 'live', client: 'mobile' });
      await new KeyVerifier(callerNc, logger).verify(key.key);
      const metricsRes = await fetch(`http://127.0.0.1:${ops.port}/metrics`);
      const metrics = { status: metricsRes.status, body: await metricsRes.text() };
      expect(metrics.body).toMatch(
        /herald_auth_verifications_total\{[^}]*result="ok"[^}]*\} [1-9]/,
      );
      expect(metrics.body).toMatch(
        /herald_auth_verification_duration_seconds_count\{[^}]*result="ok"[^}]*\} [1-9]/,
      );
      expect((await get('/nope')).status).toBe(404);
    } finally {
      await closeServer(server);
      await ops.close();
    }
  });
});

function fetchTls(
  port: number,
  path: string,
  ca: string,
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    https
      .get({ host: '127.0.0.1', port, path, ca, servername: 'localhost' }, (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          body += chunk;
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      })
      .on('error', reject);
  });
}
