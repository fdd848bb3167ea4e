import { HeraldError, TokenInputError } from '@herald/proto';
import { tokenRequiredMessage } from '../invalidation.js';
import { mintRecipientToken } from '../keys/recipient-tokens.js';
import { currentSigningSecret, requireTokens } from '../keys/signing-secrets.js';
import { broadcast } from './broadcast.js';
import { type CommandGroup, command } from './command-types.js';

/** Recipient tokens: turn them on for an existing key, and mint one for trying a key out. */
export const tokenCommands: CommandGroup = {
  'key require-token': command({
    // --id too, as issue 46 spelled it; --key as every other key command.
    flags: { key: 'string', id: 'string' },
    required: [],
    synopsis:
      'key require-token --key KEY_ID (its sockets then need a recipient token; its signing secret is shown once, and its open sockets without a token are closed)',
    async run(ctx, flags) {
      const keyId = flags.key ?? flags.id;
      if (keyId === undefined || keyId === '') {
        throw new HeraldError(
          'missing_field',
          'give the key id `key list --account ID` prints: key require-token --key KEY_ID',
          { field: 'key' },
        );
      }
      const { key, signing_secret } = await requireTokens(ctx.db(), ctx.box(), keyId);
      const json = { id: key.id, account_id: key.account_id, require_token: true, signing_secret };
      const text = [
        `Key ${key.id} now requires recipient tokens`,
        `  signing secret: ${signing_secret}`,
        '                  (shown only now: your server signs recipient tokens with it, HS256; never put it in a browser)',
        `  try it: npm run -s admin -- token create --key ${key.id} --recipient USER_ID`,
      ].join('\n');
      const failure = await broadcast(ctx, [tokenRequiredMessage(key)]);
      if (failure) {
        return {
          json: { ...json, broadcast: false },
          text,
          warning: `tokens are required in the database, but broadcasting it on NATS failed (${failure}): new connects need a token once edges' caches expire, but open sockets without one stay open; check NATS_URL (running the command again refuses: the key already requires tokens)`,
          exitCode: 1,
        };
      }
      return { json: { ...json, broadcast: true }, text };
    },
  }),

  'token create': command({
    flags: { key: 'string', recipient: 'string', ttl: 'string' },
    required: ['key', 'recipient'],
    synopsis:
      'token create --key KEY_ID --recipient UUID [--ttl 1h] (a recipient token signed with the key’s secret, for curl, websocat and the dashboard’s debug console)',
    async run(ctx, flags) {
      const { key, secret } = await currentSigningSecret(ctx.db(), ctx.box(), flags.key ?? '');
      try {
        const made = await mintRecipientToken(secret, flags.recipient ?? '', flags.ttl);
        return {
          json: {
            token: made.token,
            key_id: key.id,
            recipient: (flags.recipient ?? '').toLowerCase(),
            expires_at: made.expires_at.toISOString(),
          },
          // The token alone, so `TOKEN=$(npm run -s admin -- token create ...)` works.
          text: made.token,
        };
      } catch (err) {
        if (err instanceof TokenInputError) {
          throw new HeraldError('invalid_field', err.message, { field: err.field });
        }
        throw err;
      }
    },
  }),
};
