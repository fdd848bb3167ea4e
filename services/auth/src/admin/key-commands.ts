import { HeraldError, INBOX_MAX_DAYS, INBOX_MIN_DAYS, type KeyKind } from '@herald/proto';
import { iso } from '../dates.js';
import { resetMessage, revokedMessage, secretRotatedMessage } from '../invalidation.js';
import { issueKey, resetTestKey } from '../keys/issuing.js';
import type { KeyRequest } from '../keys/key-spec.js';
import { rotateSigningSecret } from '../keys/signing-secrets.js';
import {
  type ApiKeySummary,
  type CreatedApiKey,
  listApiKeys,
  revokeApiKey,
  setApiKeyName,
} from '../keys/store.js';
import { keyView } from '../keys/views.js';
import { broadcast } from './broadcast.js';
import { type CommandGroup, type CommandOutput, command } from './command-types.js';
import {
  PUSH_KEY_FLAGS,
  PUSH_KEY_SYNOPSIS,
  pushCreatedLines,
  pushFlags,
  pushListText,
} from './key-push-flags.js';

/** `key`: API keys, issued under the same rules as the account API's. */
export const keyCommands: CommandGroup = {
  'key create': command({
    flags: {
      account: 'string',
      kind: 'string',
      client: 'string',
      domain: 'string',
      scope: 'string',
      'require-token': 'boolean',
      'inbox-days': 'string',
      'allow-unsigned-recipients': 'boolean',
      'webhook-payload': 'boolean',
      name: 'string',
      ...PUSH_KEY_FLAGS,
    },
    required: ['account', 'kind', 'client'],
    synopsis: `key create --account ID --kind live|test --client web|mobile [--name NAME (what you call it, up to 64 characters)] [--domain D] [--scope subscribe|dispatch|both] [--require-token] [--inbox-days N (1-365: keep every event N days, with read state; a web key then requires tokens)] [--allow-unsigned-recipients (a web inbox key without tokens: anyone with the key and a user id reads that inbox)] [--webhook-payload (its events' payloads go into the account's webhook bodies)] ${PUSH_KEY_SYNOPSIS}`,
    async run(ctx, flags) {
      const request: KeyRequest = {
        kind: flags.kind as KeyKind,
        client: flags.client as KeyRequest['client'],
        domain: flags.domain,
        scope: flags.scope,
        // Left out unless given: web inbox keys require tokens by default (keys/token-rule.ts).
        require_token: flags['require-token'] === 'true' || undefined,
        allow_unsigned_recipients: flags['allow-unsigned-recipients'] === 'true' || undefined,
        inbox_days: inboxDaysFlag(flags['inbox-days']),
        webhook_payload: flags['webhook-payload'] === 'true',
        name: flags.name,
        ...pushFlags(flags),
      };
      // issueKey checks kind, client and domain (naming the field), then the plan rules.
      const key = await issueKey(ctx.keyRules(), flags.account ?? '', request);
      return createdOutput(key, `Created ${key.kind} ${key.client} key ${key.id}`);
    },
  }),

  'key rotate-secret': command({
    flags: { key: 'string' },
    required: ['key'],
    synopsis:
      'key rotate-secret --key KEY_ID (a new signing secret; the old one stays valid TOKEN_SECRET_OVERLAP_MS)',
    async run(ctx, flags) {
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
  }),

  'key reset-test': command({
    flags: { account: 'string' },
    required: ['account'],
    synopsis: 'key reset-test --account ID',
    async run(ctx, flags) {
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
  }),

  'key revoke': command({
    flags: { key: 'string' },
    required: ['key'],
    synopsis: 'key revoke --key KEY_ID',
    async run(ctx, flags) {
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
  }),

  'key rename': command({
    flags: { key: 'string', name: 'string' },
    required: ['key'],
    synopsis:
      'key rename --key KEY_ID [--name NAME] (up to 64 characters; without --name the key is unnamed)',
    async run(ctx, flags) {
      const key = await setApiKeyName(ctx.db(), flags.key ?? '', flags.name ?? '');
      return {
        json: keyView(key),
        text: key.name
          ? `Named key ${key.id} "${key.name}"`
          : `Key ${key.id} is unnamed now (lists show ${key.key_prefix}…)`,
      };
    },
  }),

  'key list': command({
    flags: { account: 'string' },
    required: ['account'],
    synopsis: 'key list --account ID',
    async run(ctx, flags) {
      const keys = await listApiKeys(ctx.db(), flags.account ?? '');
      const views = keys.map(keyView);
      const rows = keys.map((k, i) =>
        [
          k.id,
          `${k.key_prefix}…`,
          k.name ? JSON.stringify(k.name) : '(unnamed)',
          k.kind,
          k.client,
          `scope ${k.scope}`,
          k.require_token ? 'tokens required' : 'no tokens',
          inboxText(k.inbox_days),
          ...(k.webhook_payload ? ['payload in webhooks'] : []),
          ...pushListText(k),
          k.domain ?? '-',
          k.revoked_at ? `revoked ${k.revoked_at.toISOString()}` : expiryText(k),
        ]
          .join('  ')
          // The flag line of a web key without tokens, under its row.
          .concat(views[i]?.token_warning ? `\n    ! ${views[i]?.token_warning}` : ''),
      );
      return {
        json: { keys: views },
        text: keys.length
          ? [
              `${keys.length} key(s) of account ${flags.account}:`,
              ...rows.map((r) => `  ${r}`),
            ].join('\n')
          : `Account ${flags.account} has no keys: create one with \`key create --account ${flags.account} ...\``,
      };
    },
  }),
};

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
function inboxText(days: number | null): string {
  return days === null ? 'default: live events not stored' : `inbox, ${days} days`;
}

/** The key object `key create` and `key reset-test` print: the only time the key is shown. */
function createdOutput(key: CreatedApiKey, headline: string): CommandOutput {
  const view = keyView(key);
  const lines = [
    `${headline} for account ${key.account_id}`,
    ...(key.name ? [`  name:    ${key.name}`] : []),
    `  key:     ${key.key}`,
    '           (shown only now: store it in your secret manager; Herald keeps only its hash)',
    ...(key.signing_secret
      ? [
          `  signing secret: ${key.signing_secret}`,
          '           (shown only now: your server signs recipient tokens with it, HS256; sockets of this key need one)',
        ]
      : []),
    ...(key.tokens_by_default
      ? [
          '  tokens:  required, on by default for a web key in inbox mode (its inbox is never readable with the public key alone); opt out with --allow-unsigned-recipients',
        ]
      : []),
    ...(view.token_warning ? [`  warning: ${view.token_warning}`] : []),
    ...(key.domain ? [`  domain:  ${key.domain}`] : []),
    `  scope:   ${key.scope}`,
    `  mode:    ${inboxText(key.inbox_days)}`,
    ...(key.webhook_payload
      ? ["  webhook: its events' payloads go into the account's webhook bodies (--webhook-payload)"]
      : []),
    ...pushCreatedLines(key),
    `  expires: ${key.expires_at ? key.expires_at.toISOString() : 'never'}`,
  ];
  return {
    json: {
      id: key.id,
      name: key.name,
      key: key.key,
      kind: key.kind,
      client: key.client,
      domain: key.domain,
      expires_at: iso(key.expires_at),
      scope: key.scope,
      require_token: key.require_token,
      inbox_days: key.inbox_days,
      allow_unsigned_recipients: key.allow_unsigned_recipients,
      webhook_payload: key.webhook_payload,
      push: view.push,
      tokens_by_default: key.tokens_by_default,
      token_warning: view.token_warning,
      ...(key.signing_secret ? { signing_secret: key.signing_secret } : {}),
    },
    text: lines.join('\n'),
  };
}

function expiryText(k: ApiKeySummary): string {
  if (!k.expires_at) return 'never expires';
  return `${k.expires_at.getTime() <= Date.now() ? 'expired' : 'expires'} ${k.expires_at.toISOString()}`;
}
