import { type KeyObject, openSocket, post, type Stack } from '@herald/testkit';
import { describe, expect, it } from 'vitest';
import { connect, eventually, recipient, useStack } from './fixtures.js';

/*
 * Issue 46, over real sockets against the real stack: a web key in inbox mode requires recipient
 * tokens unless made with the explicit opt-out; `key require-token` turns tokens on for an
 * existing key and closes its sockets that have none; `token create` mints a token the edge takes.
 */
const stack = useStack();
const ORIGIN = 'https://app.example.com';
/** Each admin CLI call starts a process: generous on two shared cores. */
const CLI_TIMEOUT = 120_000;

/** A socket of a web key from its page's Origin, expected refused: how (HTTP, or herald.v1 close). */
async function refused(key: KeyObject, to: string, opts: { v1?: boolean; token?: string } = {}) {
  const s = openSocket(stack().wsUrl, stack().ca, {
    apiKey: key.key,
    recipient: to,
    client: 'web',
    origin: ORIGIN,
    ...opts,
  });
  const end = await s.ended;
  return { ...end, body: end.httpBody ? JSON.parse(end.httpBody) : undefined };
}

const open = (key: KeyObject, to: string, opts: { v1?: boolean; token?: string } = {}) =>
  connect(stack(), { apiKey: key.key, recipient: to, client: 'web', origin: ORIGIN, ...opts });

/** `token create --json` for the key and recipient. */
const tokenFor = async (key: KeyObject, to: string) =>
  (
    (await stack().admin(['token', 'create', '--key', key.id, '--recipient', to, '--json'])) as {
      token: string;
    }
  ).token;

/** A paid account (its keys are made by the admin CLI) or a free one (by the account API). */
async function webInboxKey(
  s: Stack,
  via: 'cli' | 'api',
  optOut = false,
): Promise<KeyObject & { account: string }> {
  const { id } = await s.createAccount(via === 'cli' ? { plan: 'hobby' } : {});
  const key = await s.createKey({
    account: id,
    kind: via === 'cli' ? 'live' : 'test',
    client: 'web',
    domain: ORIGIN,
    inboxDays: 7,
    ...(optOut ? { allowUnsignedRecipients: true } : {}),
  });
  return { ...key, account: id };
}

describe('a web key in inbox mode requires recipient tokens by default', () => {
  for (const via of ['cli', 'api'] as const) {
    it(
      `made without the opt-out (${via}): tokens on, secret shown once, a connect without a token refused`,
      async () => {
        const key = await webInboxKey(stack(), via);
        expect(key).toMatchObject({
          require_token: true,
          tokens_by_default: true,
          allow_unsigned_recipients: false,
          token_warning: null,
        });
        expect(key.signing_secret).toMatch(/^hk_sign_[0-9A-Za-z]{43}$/);
        const plain = await refused(key, recipient());
        expect(plain.httpStatus).toBe(401);
        expect(plain.body.error).toMatchObject({ code: 'missing_token', field: 'token' });
        const v1 = await refused(key, recipient(), { v1: true });
        expect(v1.code).toBe(4401);
        expect(JSON.parse(v1.reason)).toEqual({ code: 'missing_token' });
        // The owner's server still reads the inbox; the public key alone does not, over HTTP either.
        const history = await post(
          stack().baseUrl,
          stack().ca,
          { api_key: key.key, recipient: recipient() },
          { path: '/inbox/history', headers: { origin: ORIGIN } },
        );
        expect(history.status).toBe(403);
        expect(history.body.error).toMatchObject({ code: 'scope_denied', field: 'api_key' });
      },
      CLI_TIMEOUT,
    );
  }

  it(
    'made with the opt-out: no tokens, and every listing flags it in one line',
    async () => {
      const key = await webInboxKey(stack(), 'cli', true);
      expect(key).toMatchObject({
        require_token: false,
        allow_unsigned_recipients: true,
        tokens_by_default: false,
      });
      expect(key.signing_secret).toBeUndefined();
      expect(key.token_warning).toBe(
        `Created without recipient tokens on purpose (allow_unsigned_recipients): anyone holding this public web key and a user's id can open that user's socket, read their stored inbox (7 days) and mark it read. Turn tokens on: \`key require-token --key ${key.id}\` (dashboard: Require tokens).`,
      );
      const to = recipient();
      const s = await open(key, to, { v1: true });
      await s.close();
      const listed = (await stack().admin(['key', 'list', '--account', key.account, '--json'])) as {
        keys: KeyObject[];
      };
      expect(listed.keys.find((k) => k.id === key.id)?.token_warning).toBe(key.token_warning);
      const text = await stack().adminText(['key', 'list', '--account', key.account]);
      expect(text).toContain(`    ! ${key.token_warning}`);
    },
    CLI_TIMEOUT,
  );

  it(
    'refuses the opt-out where it means nothing, and require_token false without it, naming the field',
    async () => {
      const { id } = await stack().createAccount({ plan: 'hobby' });
      const fails = (args: string[]) =>
        stack()
          .admin(['key', 'create', '--account', id, '--kind', 'live', ...args, '--json'])
          .then(
            () => '',
            (e: Error) => e.message,
          );
      expect(
        await fails(['--client', 'mobile', '--inbox-days', '7', '--allow-unsigned-recipients']),
      ).toMatch(
        /--allow-unsigned-recipients: allow_unsigned_recipients is the opt-out for web keys in inbox mode/,
      );
      expect(
        await fails([
          '--client',
          'web',
          '--domain',
          ORIGIN,
          '--inbox-days',
          '7',
          '--require-token',
          '--allow-unsigned-recipients',
        ]),
      ).toMatch(/--allow-unsigned-recipients: .*give one of them/);
      expect(
        await fails([
          '--client',
          'web',
          '--domain',
          ORIGIN,
          '--inbox-days',
          '7',
          '--scope',
          'dispatch',
        ]),
      ).toMatch(/--scope: a web key in inbox mode opens sockets with recipient tokens/);
    },
    CLI_TIMEOUT,
  );
});

describe('key require-token: tokens on for an existing key', () => {
  it(
    'shows the secret once, closes the open sockets without a token, then only tokens connect',
    async () => {
      // A plain web key, as `make dev` makes: the recipient id is the credential.
      const { id } = await stack().createAccount({ plan: 'hobby' });
      const key = await stack().createKey({
        account: id,
        kind: 'live',
        client: 'web',
        domain: ORIGIN,
      });
      expect(key).toMatchObject({ require_token: false, tokens_by_default: false });
      expect(key.token_warning).toBe(
        `No recipient tokens: anyone holding this public web key and a user's id can open that user's socket and receive their live events. Turn tokens on: \`key require-token --key ${key.id}\` (dashboard: Require tokens).`,
      );
      const to = recipient();
      const v1 = await open(key, to, { v1: true });
      const plain = await open(key, to);
      const on = (await stack().admin(['key', 'require-token', '--key', key.id, '--json'])) as {
        signing_secret: string;
        broadcast: boolean;
      };
      expect(on).toMatchObject({ id: key.id, require_token: true, broadcast: true });
      expect(on.signing_secret).toMatch(/^hk_sign_[0-9A-Za-z]{43}$/);
      const [v1End, plainEnd] = await Promise.all([v1.ended, plain.ended]);
      expect(v1End.code).toBe(4401);
      expect(JSON.parse(v1End.reason)).toEqual({ code: 'missing_token' });
      expect(plainEnd.code).toBe(4401);
      const again = await refused(key, to);
      expect(again.httpStatus).toBe(401);
      expect(again.body.error.code).toBe('missing_token');
      // A second run refuses (the secret is shown once), naming the way to a new one.
      await expect(
        stack().admin(['key', 'require-token', '--id', key.id, '--json']),
      ).rejects.toThrow(/--key: key .* already requires tokens: .*key rotate-secret/);
      const s = await open(key, to, { v1: true, token: await tokenFor(key, to) });
      // A web key sends from its page's Origin too.
      const sent = await post(
        stack().baseUrl,
        stack().ca,
        { recipient: to, payload: { after: 'require-token' }, api_key: key.key, client: 'web' },
        { headers: { origin: ORIGIN } },
      );
      expect(sent.status).toBe(200);
      await eventually(() => s.events().length === 1, 'the event reached the socket with a token');
      await s.close();
    },
    CLI_TIMEOUT,
  );

  it(
    'is an account-API route too: the key of the session only, the secret in the answer',
    async () => {
      const { id } = await stack().createAccount();
      const key = await stack().createKey({
        account: id,
        kind: 'test',
        client: 'web',
        domain: ORIGIN,
      });
      const to = recipient();
      const sock = await open(key, to, { v1: true });
      const answer = await stack().accountApi(id, 'POST', `/v1/keys/${key.id}/require-token`);
      expect(answer.status).toBe(200);
      expect(answer.body).toMatchObject({ id: key.id, require_token: true, token_warning: null });
      expect(answer.body.signing_secret).toMatch(/^hk_sign_/);
      expect((await sock.ended).code).toBe(4401);
      // Another account's session cannot touch it.
      const other = await stack().createAccount();
      const foreign = await stack().accountApi(
        other.id,
        'POST',
        `/v1/keys/${key.id}/require-token`,
      );
      expect(foreign.status).toBe(404);
    },
    CLI_TIMEOUT,
  );
});

describe('token create', () => {
  it(
    'prints a token the edge accepts (text and --json), and refuses bad input naming the flag',
    async () => {
      const key = await webInboxKey(stack(), 'cli');
      const to = recipient();
      const printed = (
        await stack().adminText([
          'token',
          'create',
          '--key',
          key.id,
          '--recipient',
          to,
          '--ttl',
          '10m',
        ])
      ).trim();
      expect(printed).toMatch(/^[\w-]+\.[\w-]+\.[\w-]+$/);
      const s = await open(key, to, { v1: true, token: printed });
      await s.close();
      const json = (await stack().admin([
        'token',
        'create',
        '--key',
        key.id,
        '--recipient',
        to,
        '--json',
      ])) as { token: string; recipient: string; expires_at: string };
      expect(json.recipient).toBe(to);
      // The default lifetime: an hour.
      expect(Date.parse(json.expires_at) - Date.now()).toBeGreaterThan(3500_000);
      const other = await open(key, to, { token: json.token });
      await other.close();
      // Another recipient's token is refused by the edge.
      const mismatch = await refused(key, recipient(), { token: json.token });
      expect(mismatch.httpStatus).toBe(403);
      const fails = (args: string[]) =>
        stack()
          .admin(['token', 'create', ...args, '--json'])
          .then(
            () => '',
            (e: Error) => e.message,
          );
      expect(await fails(['--key', key.id, '--recipient', 'user-42'])).toMatch(
        /--recipient: recipient must be the user’s id as a UUID v4/,
      );
      expect(await fails(['--key', key.id, '--recipient', to, '--ttl', '2d'])).toMatch(
        /--ttl: ttl must be a whole number of seconds/,
      );
      const { id } = await stack().createAccount({ plan: 'hobby' });
      const plainKey = await stack().createKey({ account: id, kind: 'live', client: 'mobile' });
      expect(await fails(['--key', plainKey.id, '--recipient', to])).toMatch(
        /--key: key .* does not require tokens/,
      );
    },
    CLI_TIMEOUT,
  );
});
