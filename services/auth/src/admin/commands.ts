import {
  type AuthInvalidate,
  HeraldError,
  INBOX_MAX_DAYS,
  INBOX_MIN_DAYS,
  type KeyKind,
} from '@herald/proto';
import { createAccount } from '../accounts.js';
import { billingCheckout, billingShow } from '../billing/admin-commands.js';
import { iso } from '../dates.js';
import {
  planChangedMessage,
  publishInvalidation,
  resetMessage,
  revokedMessage,
  secretRotatedMessage,
} from '../invalidation.js';
import { issueKey, resetTestKey } from '../keys/issuing.js';
import type { KeyRequest } from '../keys/key-spec.js';
import { rotateSigningSecret } from '../keys/signing-secrets.js';
import {
  type ApiKeySummary,
  type CreatedApiKey,
  listApiKeys,
  revokeApiKey,
} from '../keys/store.js';
import { keyView } from '../keys/views.js';
import { migrateToLatest } from '../migrate.js';
import { createNatsUser, natsUserSubjects } from '../nats-users/store.js';
import { createResetToken } from '../password-resets.js';
import { resolvePlanChange, setSubscription } from '../subscriptions.js';
import type { CommandName } from './args.js';
import type { Command, CommandOutput, Flags } from './command-types.js';
import type { AdminContext } from './context.js';

export type { Command, CommandOutput, Flags };

/** How long a command waits for NATS to take an invalidation broadcast. */
const BROADCAST_TIMEOUT_MS = 5000;

export const commands: Record<CommandName, Command> = {
  async migrate(ctx) {
    const applied = await migrateToLatest(ctx.db());
    return {
      json: { applied },
      text: applied.length
        ? `Applied migrations: ${applied.join(', ')}`
        : 'Database schema is up to date: no migration to apply',
    };
  },

  async 'account create'(ctx, flags) {
    // Checked before anything is written: a bad plan leaves no half-made account behind.
    const plan =
      flags.plan === undefined && flags.until === undefined
        ? undefined
        : resolvePlanChange(ctx.catalogue(), flags.plan ?? 'free', flags.until);
    const account = await createAccount(ctx.db(), { email: flags.email ?? '' }, plan);
    return {
      json: {
        id: account.id,
        email: account.email,
        plan: account.plan,
        period_end: iso(account.period_end),
      },
      text: `Created account ${account.id} (${account.email}, plan ${account.plan}${account.period_end ? ` until ${account.period_end.toISOString()}` : ''})`,
    };
  },

  async 'account reset-token'(ctx, flags) {
    const reset = await createResetToken(ctx.db(), flags.email ?? '', Date.now());
    return {
      json: { account_id: reset.account_id, token: reset.token, expires_at: iso(reset.expires_at) },
      text: `Password-reset token for ${flags.email} (valid until ${reset.expires_at.toISOString()}, once): ${reset.token}\nHerald sends no mail: give it to the verified owner, who enters it on the dashboard's reset page.`,
    };
  },

  async 'account set-plan'(ctx, flags) {
    const change = resolvePlanChange(ctx.catalogue(), flags.plan ?? '', flags.until);
    const sub = await setSubscription(ctx.db(), flags.account ?? '', change);
    const until = iso(sub.period_end);
    const lapsed = sub.period_end !== null && sub.period_end.getTime() <= Date.now();
    const failure = await broadcast(ctx, [planChangedMessage(sub.account_id)]);
    const json = {
      account_id: sub.account_id,
      plan: sub.plan,
      period_end: until,
      broadcast: !failure,
    };
    const text = `Account ${sub.account_id} is on the ${change.plan.name} (${sub.plan}) plan${
      until
        ? `, paid until ${until}${lapsed ? ' (already past: its Live keys are refused)' : ''}`
        : ''
    }`;
    if (failure) {
      return {
        json,
        text: `${text}, but the invalidation broadcast failed`,
        warning: `the plan is stored, but broadcasting the change on NATS failed (${failure}): services may use their cached answers for a few seconds more; check NATS_URL and run the same set-plan again to re-broadcast`,
        exitCode: 1,
      };
    }
    return { json, text: `${text}; services dropped their cached copies` };
  },

  async 'key create'(ctx, flags) {
    const request: KeyRequest = {
      kind: flags.kind as KeyKind,
      client: flags.client as KeyRequest['client'],
      domain: flags.domain,
      scope: flags.scope,
      require_token: flags['require-token'] === 'true',
      inbox_days: inboxDaysFlag(flags['inbox-days']),
    };
    // issueKey checks kind, client and domain (naming the field), then the plan rules.
    const key = await issueKey(ctx.keyRules(), flags.account ?? '', request);
    return createdOutput(key, `Created ${key.kind} ${key.client} key ${key.id}`);
  },

  async 'key reset-test'(ctx, flags) {
    const { key, revoked } = await resetTestKey(
      ctx.db(),
      flags.account ?? '',
      new Date(),
      ctx.box(),
    );
    const out = createdOutput(
      key,
      `Reset the Test key of account ${key.account_id}: revoked ${
        revoked.map((k) => k.id).join(', ') || 'nothing (it was already revoked)'
      }, created ${key.client} key ${key.id}`,
    );
    const failure = await broadcast(ctx, revoked.map(resetMessage));
    if (failure) {
      return {
        ...out,
        warning: `the old Test key is revoked in the database, but broadcasting it on NATS failed (${failure}): services may accept it from their cache for a few seconds more; check NATS_URL`,
        exitCode: 1,
      };
    }
    return out;
  },

  async 'key rotate-secret'(ctx, flags) {
    const rotated = await rotateSigningSecret(
      ctx.db(),
      ctx.box(),
      flags.key ?? '',
      ctx.secretOverlapMs(),
    );
    const until = rotated.previous_valid_until.toISOString();
    const json = {
      id: rotated.key.id,
      account_id: rotated.key.account_id,
      signing_secret: rotated.signing_secret,
      previous_secret_valid_until: until,
    };
    const text = [
      `Rotated the signing secret of key ${rotated.key.id}`,
      `  signing secret: ${rotated.signing_secret}`,
      '                  (shown only now: give it to the servers that mint recipient tokens)',
      `  the previous secret stays valid until ${until}`,
    ].join('\n');
    const failure = await broadcast(ctx, [secretRotatedMessage(rotated.key)]);
    if (failure) {
      return {
        json,
        text,
        warning: `the secret is rotated in the database, but broadcasting it on NATS failed (${failure}): edges pick it up within their cache TTL; check NATS_URL`,
        exitCode: 1,
      };
    }
    return { json, text };
  },

  async 'nats-user create'(ctx, flags) {
    const created = await createNatsUser(ctx.db(), flags.account ?? '');
    return {
      json: { ...created, subjects: natsUserSubjects(created.account_id) },
      text: [
        `Created NATS user ${created.user} for account ${created.account_id}. Its password, shown once (only its hash is kept):`,
        `  ${created.password}`,
        `It may only request ${natsUserSubjects(created.account_id).join(' and ')} (and read their replies).`,
      ].join('\n'),
    };
  },

  async 'key list'(ctx, flags) {
    const keys = await listApiKeys(ctx.db(), flags.account ?? '');
    const rows = keys.map((k) =>
      [
        k.id,
        `${k.key_prefix}…`,
        k.kind,
        k.client,
        `scope ${k.scope}`,
        k.require_token ? 'tokens required' : 'no tokens',
        inboxText(k.inbox_days),
        k.domain ?? '-',
        k.revoked_at ? `revoked ${k.revoked_at.toISOString()}` : expiryText(k),
      ].join('  '),
    );
    return {
      json: { keys: keys.map(keyView) },
      text: keys.length
        ? [`${keys.length} key(s) of account ${flags.account}:`, ...rows.map((r) => `  ${r}`)].join(
            '\n',
          )
        : `Account ${flags.account} has no keys: create one with \`key create --account ${flags.account} ...\``,
    };
  },

  async 'key revoke'(ctx, flags) {
    const key = await revokeApiKey(ctx.db(), flags.key ?? '');
    const revokedAt = iso(key.revoked_at);
    // The database already refuses the key; the broadcast only cuts callers' cached answers short.
    const failure = await broadcast(ctx, [revokedMessage(key)]);
    const json = {
      id: key.id,
      account_id: key.account_id,
      revoked_at: revokedAt,
      broadcast: !failure,
    };
    if (failure) {
      return {
        json,
        text: `Revoked key ${key.id} at ${revokedAt}, but the invalidation broadcast failed`,
        warning: `the key is revoked in the database, but broadcasting it on NATS failed (${failure}): services may accept it from their cache for a few seconds more; check NATS_URL and run \`key revoke --key ${key.id}\` again to re-broadcast`,
        exitCode: 1,
      };
    }
    return {
      json,
      text: `Revoked key ${key.id} at ${revokedAt}; services dropped their cached copies`,
    };
  },

  'billing checkout': billingCheckout,
  'billing show': billingShow,
};

/** The key object `key create` and `key reset-test` print: the only time the key is shown. */
/** `--inbox-days N`: a whole number of days, 1 to 365; absent: no inbox. */
function inboxDaysFlag(value: string | undefined): number | null {
  if (value === undefined) return null;
  const days = /^[0-9]{1,3}$/.test(value) ? Number(value) : Number.NaN;
  if (!(days >= INBOX_MIN_DAYS && days <= INBOX_MAX_DAYS)) {
    throw new HeraldError(
      'invalid_field',
      `must be a whole number of days from ${INBOX_MIN_DAYS} to ${INBOX_MAX_DAYS} (got "${value}"): how long every event of the key is kept per recipient; leave the flag out for the default, live events not stored`,
      { field: 'inbox_days' },
    );
  }
  return days;
}

/** A key's mode and retention, as lists state it. */
export function inboxText(days: number | null): string {
  return days === null ? 'default: live events not stored' : `inbox, ${days} days`;
}

function createdOutput(key: CreatedApiKey, headline: string): CommandOutput {
  const lines = [
    `${headline} for account ${key.account_id}`,
    `  key:     ${key.key}`,
    '           (shown only now: store it in your secret manager; Herald keeps only its hash)',
    ...(key.signing_secret
      ? [
          `  signing secret: ${key.signing_secret}`,
          '           (shown only now: your server signs recipient tokens with it, HS256; sockets of this key need one)',
        ]
      : []),
    ...(key.domain ? [`  domain:  ${key.domain}`] : []),
    `  scope:   ${key.scope}`,
    `  mode:    ${inboxText(key.inbox_days)}`,
    `  expires: ${key.expires_at ? key.expires_at.toISOString() : 'never'}`,
  ];
  return {
    json: {
      id: key.id,
      key: key.key,
      kind: key.kind,
      client: key.client,
      domain: key.domain,
      expires_at: iso(key.expires_at),
      scope: key.scope,
      require_token: key.require_token,
      inbox_days: key.inbox_days,
      ...(key.signing_secret ? { signing_secret: key.signing_secret } : {}),
    },
    text: lines.join('\n'),
  };
}

/**
 * Publishes the invalidations; resolves with why it failed, or undefined. The database change
 * already stands either way.
 */
async function broadcast(
  ctx: AdminContext,
  messages: AuthInvalidate[],
): Promise<string | undefined> {
  if (messages.length === 0) return undefined;
  try {
    const nc = await ctx.nats();
    await withTimeout(
      Promise.all(messages.map((m) => publishInvalidation(nc, m))),
      BROADCAST_TIMEOUT_MS,
    );
    return undefined;
  } catch (err) {
    return err instanceof Error ? err.message : String(err);
  }
}

function expiryText(k: ApiKeySummary): string {
  if (!k.expires_at) return 'never expires';
  return `${k.expires_at.getTime() <= Date.now() ? 'expired' : 'expires'} ${k.expires_at.toISOString()}`;
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer from NATS within ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/** The flag a library error's field corresponds to (they share names, `_` written `-`). */
export function flagOf(err: HeraldError): string | undefined {
  return err.field === undefined ? undefined : `--${err.field.replaceAll('_', '-')}`;
}
