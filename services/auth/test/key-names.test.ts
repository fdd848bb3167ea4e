import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount } from '../src/accounts.js';
import { KEY_NAME_MAX_LENGTH } from '../src/keys/key-name.js';
import { type AccountApiStack, startAccountApi, type User } from './account-api-fixture.js';
import { FAR_FUTURE } from './catalogue.js';
import { inProcessAdmin } from './cli.js';
import { natsOf } from './servers.js';

/** Key names (issue 45, migration 0014): created, renamed, listed, in the API and the admin CLI. */

let stack: AccountApiStack;
let user: User;

beforeAll(async () => {
  stack = await startAccountApi();
  user = await stack.newUser();
});
afterAll(() => stack?.stop());

const admin = (...argv: string[]) =>
  inProcessAdmin(argv, {
    DATABASE_URL: stack.servers.pg.url,
    ...natsOf(stack.servers).env('auth'),
  });

describe('key names through the account API', () => {
  it('creates a named key (trimmed), renames it, clears it, and lists it', async () => {
    const created = await stack.call('POST', '/v1/keys/test', {
      body: { client: 'mobile', name: '  staging app  ' },
      headers: stack.as(user),
    });
    expect(created.status).toBe(201);
    expect(created.body.name).toBe('staging app');
    const id = created.body.id as string;

    const longest = 'n'.repeat(KEY_NAME_MAX_LENGTH);
    const renamed = await stack.call('PUT', `/v1/keys/${id}/name`, {
      body: { name: longest },
      headers: stack.as(user),
    });
    expect(renamed.status).toBe(200);
    expect(renamed.body.name).toBe(longest);
    const listed = await stack.call('GET', '/v1/keys', { headers: stack.as(user) });
    expect(listed.body.keys[0]).toMatchObject({ id, name: longest });

    const tooLong = await stack.call('PUT', `/v1/keys/${id}/name`, {
      body: { name: `${longest}n` },
      headers: stack.as(user),
    });
    expect(tooLong.status).toBe(400);
    expect(tooLong.body.error).toMatchObject({ code: 'invalid_field', field: 'name' });
    const lineBreak = await stack.call('PUT', `/v1/keys/${id}/name`, {
      body: { name: 'a\nb' },
      headers: stack.as(user),
    });
    expect(lineBreak.body.error).toMatchObject({ field: 'name' });

    const cleared = await stack.call('PUT', `/v1/keys/${id}/name`, {
      body: { name: '   ' },
      headers: stack.as(user),
    });
    expect(cleared.body.name).toBeNull();
  });

  it("renames only the session's account's keys", async () => {
    const other = await stack.newUser();
    const theirs = await stack.call('POST', '/v1/keys/test', {
      body: { client: 'mobile', name: 'theirs' },
      headers: stack.as(other),
    });
    const out = await stack.call('PUT', `/v1/keys/${theirs.body.id}/name`, {
      body: { name: 'mine now' },
      headers: stack.as(user),
    });
    expect(out.status).toBe(404);
    const listed = await stack.call('GET', '/v1/keys', { headers: stack.as(other) });
    expect(listed.body.keys[0].name).toBe('theirs');
  });
});

describe('key names in the admin CLI', () => {
  it('key create --name, key rename and key list show the name', async () => {
    const account = await createAccount(
      stack.servers.db,
      { email: `names-${Date.now()}@example.com` },
      { plan: { id: 'startup' }, period_end: FAR_FUTURE },
    );
    const made = await admin(
      'key',
      'create',
      '--account',
      account.id,
      '--kind',
      'live',
      '--client',
      'mobile',
      '--name',
      'checkout backend',
    );
    expect(made.status).toBe(0);
    expect(made.stdout).toContain('  name:    checkout backend');
    const list = await admin('key', 'list', '--account', account.id);
    expect(list.stdout).toMatch(/hk_live_.{4}… {2}"checkout backend" {2}live/);
    const { keys } = JSON.parse(
      (await admin('key', 'list', '--account', account.id, '--json')).stdout,
    );
    expect(keys[0].name).toBe('checkout backend');

    const renamed = await admin('key', 'rename', '--key', keys[0].id, '--name', 'orders');
    expect(renamed.stdout).toBe(`Named key ${keys[0].id} "orders"\n`);
    const unnamed = await admin('key', 'rename', '--key', keys[0].id);
    expect(unnamed.stdout).toContain('is unnamed now');
    expect((await admin('key', 'list', '--account', account.id)).stdout).toContain('(unnamed)');
  });
});
