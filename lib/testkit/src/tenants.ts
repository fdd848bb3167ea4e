import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { type HttpResult, request } from './http-client.js';
import { REPO_ROOT } from './service-process.js';

const execFileAsync = promisify(execFile);

export interface KeyObject {
  id: string;
  key: string;
  kind: 'live' | 'test';
  client: 'web' | 'mobile';
  domain: string | null;
  expires_at: string | number | null;
  scope?: 'subscribe' | 'dispatch' | 'both';
  require_token?: boolean;
  /** Only for a key that requires recipient tokens: shown once, at creation. */
  signing_secret?: string;
  /** Inbox mode: days each event is kept per recipient; null: not stored. */
  inbox_days?: number | null;
  /** Made with the opt-out of the recipient tokens a web inbox key otherwise requires. */
  allow_unsigned_recipients?: boolean;
  /** Its events' payloads go into the account's webhook bodies (`--webhook-payload`). */
  webhook_payload?: boolean;
  push?: { after_ms: number; ttl_s: number; title: string | null } | null;
  /** Tokens came on by the rule for web inbox keys, not because they were asked for. */
  tokens_by_default?: boolean;
  /** A web key without tokens: what anyone with it can do, and how to turn tokens on. */
  token_warning?: string | null;
}

/** A Pusher app (issue 41): what pusher-js and the `pusher` library are given. */
export interface PusherAppObject {
  app_id: string;
  key: string;
  /** Shown once, at creation (and by rotate-secret). */
  secret: string;
  /** The Herald key it is bound to. */
  key_id: string;
  user_ids: 'uuid' | 'any';
  user_channel: string | null;
  created_at: string;
}

/** A running stack's tenants: accounts and their keys, made as a customer or support would. */
export interface Tenants {
  /** A new account; a paid `plan` runs `until` (ISO date; default a year from now). */
  createAccount(opts?: { email?: string; plan?: string; until?: string }): Promise<{ id: string }>;
  createKey(opts: {
    account: string;
    kind?: 'live' | 'test';
    client?: 'web' | 'mobile';
    domain?: string;
    scope?: 'subscribe' | 'dispatch' | 'both';
    requireToken?: boolean;
    /** Inbox mode (`--inbox-days N`): keep every event N days per recipient. */
    inboxDays?: number;
    /** The opt-out (`--allow-unsigned-recipients`): a web inbox key without tokens. */
    allowUnsignedRecipients?: boolean;
    /** The webhook opt-in (`--webhook-payload`): payloads go into the account's webhook bodies. */
    webhookPayload?: boolean;
    /** The push fallback (`--push-after-ms N`, the key's template title, `--push-include-payload`). */
    push?: { afterMs: number; title?: string; includePayload?: boolean };
  }): Promise<KeyObject>;
  revokeKey(id: string): Promise<void>;
  /**
   * A Pusher app of `account` bound to `keyId` (default: the account's only Live key), made
   * through the account API when the account has a session, else with `pusher-app create`.
   */
  createPusherApp(opts: {
    account: string;
    keyId?: string;
    userIds?: 'uuid' | 'any';
    /** A `private-` channel template with one `{id}`, e.g. `private-App.Models.User.{id}`. */
    userChannel?: string;
  }): Promise<PusherAppObject>;
  /** Runs the admin CLI against this stack and returns its parsed `--json` output. */
  admin(args: string[]): Promise<unknown>;
  /** Runs the admin CLI against this stack without --json: its stdout as printed. */
  adminText(args: string[]): Promise<string>;
  /** A request on the account API as `account` (made by {@link createAccount} on the free plan). */
  accountApi(account: string, method: string, path: string, body?: unknown): Promise<HttpResult>;
}

/**
 * Tenants are made through the account API at `authUrl`, as a customer would: far quicker than a
 * CLI process per call. Sessions are kept per account for key creation and revocation; what the
 * API cannot do (a paid plan, a key of an account made elsewhere) goes through `admin`.
 */
export function tenants(
  authUrl: string,
  ca: string,
  admin: (args: string[]) => Promise<unknown>,
  adminText: (args: string[]) => Promise<string>,
): Tenants {
  const sessions = new Map<string, Record<string, string>>();
  const keyOwners = new Map<string, string>();
  const login = async (email: string, password: string) => {
    const res = await request('POST', `${authUrl}/v1/sessions`, ca, { email, password });
    if (res.status !== 201) throw new Error(`login failed: ${res.status} ${res.text}`);
    const cookie = String(res.headers['set-cookie'] ?? '').split(';')[0] ?? '';
    return { cookie, 'x-herald-csrf': res.body.csrf as string };
  };
  return {
    admin,
    adminText,
    accountApi(account, method, path, body) {
      const session = sessions.get(account);
      if (!session)
        throw new Error(`account ${account} has no session: create it on the free plan`);
      return request(method, `${authUrl}${path}`, ca, body, session);
    },
    async createAccount(o = {}) {
      const email = o.email ?? `acct-${randomUUID()}@test.herald`;
      if (o.plan && o.plan !== 'free') {
        // A paid plan is support's to set: only the admin CLI can.
        const out = (await admin([
          'account',
          'create',
          '--email',
          email,
          '--plan',
          o.plan,
          '--until',
          o.until ?? new Date(Date.now() + 365 * 86_400_000).toISOString(),
          '--json',
        ])) as { id: string };
        return { id: out.id };
      }
      const password = randomUUID();
      const signup = await request('POST', `${authUrl}/v1/accounts`, ca, { email, password });
      if (signup.status !== 201) throw new Error(`signup failed: ${signup.status} ${signup.text}`);
      sessions.set(signup.body.id, await login(email, password));
      return { id: signup.body.id as string };
    },
    async createKey(o) {
      const session = sessions.get(o.account);
      if (!session) {
        const args = [
          'key',
          'create',
          '--account',
          o.account,
          '--kind',
          o.kind ?? 'test',
          '--client',
          o.client ?? 'mobile',
        ];
        if (o.domain) args.push('--domain', o.domain);
        if (o.scope) args.push('--scope', o.scope);
        if (o.requireToken) args.push('--require-token');
        if (o.inboxDays !== undefined) args.push('--inbox-days', String(o.inboxDays));
        if (o.allowUnsignedRecipients) args.push('--allow-unsigned-recipients');
        if (o.webhookPayload) args.push('--webhook-payload');
        if (o.push) args.push('--push-after-ms', String(o.push.afterMs));
        if (o.push?.title !== undefined) args.push('--push-title', o.push.title);
        if (o.push?.includePayload) args.push('--push-include-payload');
        return (await admin([...args, '--json'])) as KeyObject;
      }
      const path = (o.kind ?? 'test') === 'test' ? '/v1/keys/test' : '/v1/keys';
      const body = {
        client: o.client ?? 'mobile',
        ...(o.domain ? { domain: o.domain } : {}),
        ...(o.scope ? { scope: o.scope } : {}),
        ...(o.requireToken ? { require_token: true } : {}),
        ...(o.inboxDays !== undefined ? { inbox_days: o.inboxDays } : {}),
        ...(o.allowUnsignedRecipients ? { allow_unsigned_recipients: true } : {}),
        ...(o.webhookPayload ? { webhook_payload: true } : {}),
        ...(o.push ? { push_after_ms: o.push.afterMs } : {}),
        ...(o.push?.title !== undefined ? { push_title: o.push.title } : {}),
        ...(o.push?.includePayload ? { push_include_payload: true } : {}),
      };
      const res = await request('POST', `${authUrl}${path}`, ca, body, session);
      if (res.status !== 201) throw new Error(`key create failed: ${res.status} ${res.text}`);
      keyOwners.set(res.body.id, o.account);
      return res.body as KeyObject;
    },
    async revokeKey(id) {
      const session = sessions.get(keyOwners.get(id) ?? '');
      if (!session) {
        await admin(['key', 'revoke', '--key', id, '--json']);
        return;
      }
      const res = await request('DELETE', `${authUrl}/v1/keys/${id}`, ca, undefined, session);
      if (res.status !== 200) throw new Error(`key revoke failed: ${res.status} ${res.text}`);
    },
    async createPusherApp(o) {
      const session = sessions.get(o.account);
      if (!session) {
        const args = ['pusher-app', 'create', '--account', o.account];
        if (o.keyId) args.push('--key-id', o.keyId);
        if (o.userIds) args.push('--user-ids', o.userIds);
        if (o.userChannel) args.push('--user-channel', o.userChannel);
        return (await admin([...args, '--json'])) as PusherAppObject;
      }
      const body = {
        ...(o.keyId ? { key_id: o.keyId } : {}),
        ...(o.userIds ? { user_ids: o.userIds } : {}),
        ...(o.userChannel ? { user_channel: o.userChannel } : {}),
      };
      const res = await request('POST', `${authUrl}/v1/pusher/apps`, ca, body, session);
      if (res.status !== 201)
        throw new Error(`pusher app create failed: ${res.status} ${res.text}`);
      return res.body as PusherAppObject;
    },
  };
}

/** Runs the admin CLI (from source) with the given connection settings and parses its `--json` output. */
export async function runAdmin(args: string[], env: Record<string, string>): Promise<unknown> {
  return JSON.parse(await runAdminText(args, env));
}

/** Runs the admin CLI (from source) with the given connection settings: its stdout as printed. */
export async function runAdminText(args: string[], env: Record<string, string>): Promise<string> {
  try {
    const { stdout } = await execFileAsync(
      process.execPath,
      [
        '--conditions=herald-source',
        '--import',
        'tsx',
        join('services', 'auth', 'src', 'admin.ts'),
        ...args,
      ],
      { cwd: REPO_ROOT, env: { PATH: process.env.PATH ?? '', LOG_LEVEL: 'warn', ...env } },
    );
    return stdout;
  } catch (err) {
    const e = err as { stderr?: string; stdout?: string; message: string };
    throw new Error(`admin ${args.join(' ')} failed: ${e.stderr || e.stdout || e.message}`);
  }
}
