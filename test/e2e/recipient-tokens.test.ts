import { createHmac } from 'node:crypto';
import type { Stack, TestSocket } from '@herald/testkit';
import { openSocket } from '@herald/testkit';
import { SignJWT } from 'jose';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { connect, eventually, notify, recipient, type Tenant, useStack } from './fixtures.js';

/*
 * Recipient tokens (issue 30), each case over a real socket against the real stack: auth issues
 * the key and its signing secret, the edge checks the token at connect, on expiry and in-band.
 * No clock skew tolerated, so an expiry is seen when it happens.
 */
const stack = useStack({ env: { 'socket-edge': { TOKEN_CLOCK_SKEW_MS: '0' } } });

const now = () => Math.floor(Date.now() / 1000);

/** A token minted as a customer's server would, with jose; claims and header overridable. */
async function mint(
  secret: string,
  claims: { sub?: string; exp?: number; nbf?: number; iat?: number },
  alg = 'HS256',
): Promise<string> {
  const jwt = new SignJWT({ ...claims }).setProtectedHeader({ alg, typ: 'JWT' });
  return jwt.sign(new TextEncoder().encode(secret));
}

/** A token made by hand with node:crypto (no JWT library), or unsigned with `alg: none`. */
function handMade(secret: string | undefined, claims: Record<string, unknown>): string {
  const b64 = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url');
  const head = `${b64({ alg: secret === undefined ? 'none' : 'HS256', typ: 'JWT' })}.${b64(claims)}`;
  if (secret === undefined) return `${head}.`;
  return `${head}.${createHmac('sha256', secret).update(head).digest('base64url')}`;
}

async function tokenTenant(s: Stack): Promise<Tenant & { secret: string }> {
  const { id } = await s.createAccount();
  const key = await s.createKey({
    account: id,
    kind: 'test',
    client: 'mobile',
    requireToken: true,
  });
  expect(key.require_token).toBe(true);
  expect(key.signing_secret).toMatch(/^hk_sign_[0-9A-Za-z]{43}$/);
  return { account: id, key, secret: key.signing_secret as string };
}

/** Opens a socket expected to be refused; resolves with how (HTTP, or herald.v1 close). */
async function refused(t: Tenant, to: string, token: string | undefined, v1 = false) {
  const s = openSocket(stack().wsUrl, stack().ca, {
    apiKey: t.key.key,
    recipient: to,
    v1,
    ...(token === undefined ? {} : { token }),
  });
  const end = await s.ended;
  return { ...end, body: end.httpBody ? JSON.parse(end.httpBody) : undefined, frames: s.frames };
}

async function receives(t: Tenant, s: TestSocket, to: string, payload: unknown): Promise<void> {
  const before = s.frames.length;
  const res = await notify(stack(), t, to, payload);
  expect(res.status).toBe(200);
  const frames = await s.waitForFrames(before + 1);
  expect(frames.at(-1)?.text).toBe(JSON.stringify(payload));
}

describe('recipient tokens', () => {
  it('stores the signing secret sealed, never in clear', async () => {
    const t = await tokenTenant(stack());
    const db = new pg.Client({ connectionString: stack().databaseUrl });
    await db.connect();
    try {
      const { rows } = await db.query('select * from api_keys where id = $1', [t.key.id]);
      expect(rows).toHaveLength(1);
      expect(rows[0].require_token).toBe(true);
      expect(String(rows[0].signing_secret)).toMatch(/^v1\./);
      for (const value of Object.values(rows[0])) {
        expect(String(value)).not.toContain(t.secret.slice('hk_sign_'.length));
      }
    } finally {
      await db.end();
    }
  });

  it('a key that does not require tokens still connects without one', async () => {
    const { id } = await stack().createAccount();
    const key = await stack().createKey({ account: id, kind: 'test', client: 'mobile' });
    expect(key.require_token).toBe(false);
    expect(key.signing_secret).toBeUndefined();
    const to = recipient();
    const s = await connect(stack(), { apiKey: key.key, recipient: to });
    await receives({ account: id, key }, s, to, { plain: true });
    await s.close();
  });

  it('connects with a valid token, and receives (a key from the admin CLI)', async () => {
    // A paid account: its keys are made by `key create --require-token --json`.
    const { id } = await stack().createAccount({ plan: 'hobby' });
    const key = await stack().createKey({
      account: id,
      kind: 'live',
      client: 'mobile',
      requireToken: true,
      scope: 'subscribe',
    });
    expect(key).toMatchObject({ require_token: true, scope: 'subscribe' });
    expect(key.signing_secret).toMatch(/^hk_sign_/);
    const to = recipient();
    const token = await mint(key.signing_secret as string, { sub: to, exp: now() + 600 });
    const s = await connect(stack(), { apiKey: key.key, recipient: to, token });
    await s.close();
  });

  it('connects with a valid token, and receives', async () => {
    const t = await tokenTenant(stack());
    const to = recipient();
    const token = await mint(t.secret, { sub: to, exp: now() + 3600, iat: now() });
    const s = await connect(stack(), { apiKey: t.key.key, recipient: to, token });
    await receives(t, s, to, { hello: 'token' });
    await s.close();
  });

  it('refuses a connect without a token: 401 missing_token, 4401 in herald.v1', async () => {
    const t = await tokenTenant(stack());
    const plain = await refused(t, recipient(), undefined);
    expect(plain.httpStatus).toBe(401);
    expect(plain.body.error).toMatchObject({ code: 'missing_token', field: 'token' });
    const v1 = await refused(t, recipient(), undefined, true);
    expect(v1.code).toBe(4401);
    expect(JSON.parse(v1.reason)).toEqual({ code: 'missing_token' });
  });

  const invalid: Array<[string, (secret: string, to: string) => Promise<string> | string]> = [
    ['expired', (secret, to) => mint(secret, { sub: to, exp: now() - 60 })],
    [
      'not yet valid',
      (secret, to) => mint(secret, { sub: to, exp: now() + 7200, nbf: now() + 3600 }),
    ],
    [
      'signed with another secret',
      (_s, to) => mint('hk_sign_not_this_keys_secret', { sub: to, exp: now() + 600 }),
    ],
    ['alg none', (_s, to) => handMade(undefined, { sub: to, exp: now() + 600 })],
    [
      'HS512 with the right secret',
      (secret, to) => mint(secret, { sub: to, exp: now() + 600 }, 'HS512'),
    ],
    ['without exp', (secret, to) => handMade(secret, { sub: to })],
    [
      'living longer than TOKEN_MAX_LIFETIME_MS',
      (secret, to) => mint(secret, { sub: to, exp: now() + 48 * 3600 }),
    ],
    ['malformed', () => 'not.a.jwt'],
  ];
  for (const [name, make] of invalid) {
    it(`refuses a token ${name}: 401 invalid_token, 4401 in herald.v1`, async () => {
      const t = await tokenTenant(stack());
      const to = recipient();
      const token = await make(t.secret, to);
      const plain = await refused(t, to, token);
      expect(plain.httpStatus).toBe(401);
      expect(plain.body.error).toMatchObject({ code: 'invalid_token', field: 'token' });
      expect(plain.httpBody).not.toContain(token);
      const v1 = await refused(t, to, token, true);
      expect(v1.code).toBe(4401);
      expect(JSON.parse(v1.reason)).toEqual({ code: 'invalid_token' });
      expect(v1.frames[0]?.envelope?.error?.code).toBe('invalid_token');
    });
  }

  it('a token made with node:crypto alone is accepted (any JWT library can mint one)', async () => {
    const t = await tokenTenant(stack());
    const to = recipient();
    const token = handMade(t.secret, { sub: to, exp: now() + 600 });
    const s = await connect(stack(), { apiKey: t.key.key, recipient: to, token });
    await s.close();
  });

  it("refuses another recipient's token: 403 token_recipient_mismatch, 4403 in herald.v1", async () => {
    const t = await tokenTenant(stack());
    const token = await mint(t.secret, { sub: recipient(), exp: now() + 600 });
    const to = recipient();
    const plain = await refused(t, to, token);
    expect(plain.httpStatus).toBe(403);
    expect(plain.body.error.code).toBe('token_recipient_mismatch');
    const v1 = await refused(t, to, token, true);
    expect(v1.code).toBe(4403);
    expect(JSON.parse(v1.reason)).toEqual({ code: 'token_recipient_mismatch' });
  });

  it('closes a socket when its token expires (4401 token_expired), unless refreshed in-band first', async () => {
    const t = await tokenTenant(stack());
    const to = recipient();
    const short = await mint(t.secret, { sub: to, exp: now() + 3 });
    const lapsing = await connect(stack(), {
      apiKey: t.key.key,
      recipient: to,
      token: short,
      v1: true,
    });
    const refreshed = await connect(stack(), {
      apiKey: t.key.key,
      recipient: to,
      token: short,
      v1: true,
    });
    refreshed.sendToken(await mint(t.secret, { sub: to, exp: now() + 3600 }));
    const end = await lapsing.ended;
    expect(end.code).toBe(4401);
    expect(JSON.parse(end.reason)).toEqual({ code: 'token_expired' });
    expect(lapsing.frames.at(-1)?.envelope?.error?.code).toBe('token_expired');
    // Both tokens expired together: the refreshed socket is still open, and still receives.
    expect(refreshed.ws.readyState).toBe(refreshed.ws.OPEN);
    const res = await notify(stack(), t, to, { after: 'expiry' });
    expect(res.status).toBe(200);
    await eventually(() => refreshed.events().length === 1, 'the refreshed socket got the event');
    expect(refreshed.ws.readyState).toBe(refreshed.ws.OPEN);
    await refreshed.close();
  });

  it("closes a socket whose in-band token is another recipient's (4403)", async () => {
    const t = await tokenTenant(stack());
    const to = recipient();
    const token = await mint(t.secret, { sub: to, exp: now() + 600 });
    const s = await connect(stack(), { apiKey: t.key.key, recipient: to, token, v1: true });
    s.sendToken(await mint(t.secret, { sub: recipient(), exp: now() + 600 }));
    const end = await s.ended;
    expect(end.code).toBe(4403);
    expect(JSON.parse(end.reason)).toEqual({ code: 'token_recipient_mismatch' });
  });

  it('rotating the secret keeps the old one valid for the overlap; a second rotation ends it', async () => {
    const t = await tokenTenant(stack());
    const to = recipient();
    const original = t.secret;
    const open = await connect(stack(), {
      apiKey: t.key.key,
      recipient: to,
      token: await mint(original, { sub: to, exp: now() + 600 }),
      v1: true,
    });
    const first = (await stack().admin(['key', 'rotate-secret', '--key', t.key.id, '--json'])) as {
      signing_secret: string;
      previous_secret_valid_until: string;
    };
    expect(first.signing_secret).not.toBe(original);
    // The default overlap: as long as a token may live (24 h).
    expect(Date.parse(first.previous_secret_valid_until)).toBeGreaterThan(
      Date.now() + 23 * 3600_000,
    );
    // The old secret still opens sockets, the new one too; the open socket refreshes with the new.
    for (const secret of [original, first.signing_secret]) {
      const s = await connect(stack(), {
        apiKey: t.key.key,
        recipient: to,
        token: await mint(secret, { sub: to, exp: now() + 600 }),
      });
      await s.close();
    }
    open.sendToken(await mint(first.signing_secret, { sub: to, exp: now() + 600 }));
    const res = await notify(stack(), t, to, { still: 'open' });
    expect(res.status).toBe(200);
    await eventually(() => open.events().length === 1, 'the connected user was not dropped');
    // A second rotation replaces the overlap: the original secret is no longer accepted.
    const second = (await stack().admin(['key', 'rotate-secret', '--key', t.key.id, '--json'])) as {
      signing_secret: string;
    };
    await eventually(async () => {
      const r = await refused(t, to, await mint(original, { sub: to, exp: now() + 600 }));
      return r.httpStatus === 401 && r.body.error.code === 'invalid_token';
    }, 'the original secret is refused after the second rotation');
    for (const secret of [first.signing_secret, second.signing_secret]) {
      const s = await connect(stack(), {
        apiKey: t.key.key,
        recipient: to,
        token: await mint(secret, { sub: to, exp: now() + 600 }),
      });
      await s.close();
    }
    expect(open.ws.readyState).toBe(open.ws.OPEN);
    await open.close();
  });
});
