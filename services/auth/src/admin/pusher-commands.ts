import type { PusherAppView } from '@herald/proto';
import { pusherAppMessage } from '../invalidation.js';
import {
  createPusherApp,
  deletePusherApp,
  listPusherApps,
  rotatePusherSecret,
} from '../pusher/store.js';
import { broadcast } from './broadcast.js';
import { type CommandGroup, type CommandOutput, command } from './command-types.js';
import type { AdminContext } from './context.js';

/**
 * `pusher-app`: Pusher apps (issue 41), bound to one of the account's keys; the same store and
 * rules as the account API's /v1/pusher/apps. Each change broadcasts `pusher_app` for the bound
 * key, so the edge and ingress drop their cached lookups.
 */
export const pusherCommands: CommandGroup = {
  'pusher-app create': command({
    flags: {
      account: 'string',
      'key-id': 'string',
      'user-ids': 'string',
      'user-channel': 'string',
    },
    required: ['account'],
    synopsis:
      "pusher-app create --account ID [--key-id KEY_ID (default: the account's only Live key)] [--user-ids uuid|any] [--user-channel 'private-App.Models.User.{id}'] (app_id, key and secret for pusher-js and the `pusher` library; the secret shown once)",
    async run(ctx, flags) {
      const app = await createPusherApp(
        ctx.db(),
        ctx.box(),
        flags.account ?? '',
        {
          key_id: flags['key-id'],
          user_ids: flags['user-ids'],
          user_channel: flags['user-channel'],
        },
        { maxApps: ctx.maxPusherApps() },
      );
      const text = [
        `Created Pusher app ${app.app_id} for account ${flags.account}, bound to key ${app.key_id}`,
        `  app_id:  ${app.app_id}`,
        `  key:     ${app.key}`,
        `  secret:  ${app.secret}`,
        '           (shown only now: your server signs channel auth, sign-ins and API requests with it; never put it in a browser)',
        `  user ids: ${app.user_ids === 'uuid' ? 'uuid (user_data.id must be a UUID v4)' : 'any (each id maps to a stable recipient)'}`,
        `  user channel: ${app.user_channel ?? 'none (only #server-to-user-<id> is durable)'}`,
      ].join('\n');
      return withBroadcast(ctx, app, { json: app, text }, 'created');
    },
  }),

  'pusher-app list': command({
    flags: { account: 'string' },
    required: ['account'],
    synopsis: 'pusher-app list --account ID',
    async run(ctx, flags) {
      const apps = await listPusherApps(ctx.db(), flags.account ?? '');
      const rows = apps.map((a) =>
        [
          a.app_id,
          a.key,
          `key ${a.key_id}`,
          `user ids ${a.user_ids}`,
          a.user_channel ?? '-',
          a.created_at,
        ].join('  '),
      );
      return {
        json: { apps },
        text: apps.length
          ? [
              `${apps.length} Pusher app(s) of account ${flags.account}:`,
              ...rows.map((r) => `  ${r}`),
            ].join('\n')
          : `Account ${flags.account} has no Pusher apps: create one with \`pusher-app create --account ${flags.account}\``,
      };
    },
  }),

  'pusher-app delete': command({
    flags: { account: 'string', 'app-id': 'string' },
    required: ['account', 'app-id'],
    synopsis:
      'pusher-app delete --account ID --app-id N (its sockets and API requests are refused from then on)',
    async run(ctx, flags) {
      const app = await deletePusherApp(ctx.db(), flags.account ?? '', flags['app-id'] ?? '');
      const text = `Deleted Pusher app ${app.app_id} (key ${app.key}) of account ${flags.account}`;
      return withBroadcast(ctx, app, { json: app, text }, 'deleted');
    },
  }),

  'pusher-app rotate-secret': command({
    flags: { account: 'string', 'app-id': 'string' },
    required: ['account', 'app-id'],
    synopsis:
      'pusher-app rotate-secret --account ID --app-id N (a new secret, shown once; the old one stops at once)',
    async run(ctx, flags) {
      const app = await rotatePusherSecret(
        ctx.db(),
        ctx.box(),
        flags.account ?? '',
        flags['app-id'] ?? '',
      );
      const json = { app_id: app.app_id, key: app.key, secret: app.secret };
      const text = [
        `Rotated the secret of Pusher app ${app.app_id}`,
        `  secret:  ${app.secret}`,
        '           (shown only now: the previous secret no longer signs anything)',
      ].join('\n');
      return withBroadcast(ctx, app, { json, text }, 'rotated');
    },
  }),
};

/** Broadcasts `pusher_app` for the app's key; a failure is a warning and exit status 1. */
async function withBroadcast(
  ctx: AdminContext,
  app: PusherAppView,
  out: { json: object; text: string },
  what: string,
): Promise<CommandOutput> {
  const failure = await broadcast(ctx, [pusherAppMessage(app.key_id)]);
  const json = { ...out.json, broadcast: !failure };
  if (!failure) return { json, text: out.text };
  return {
    json,
    text: out.text,
    warning: `the app is ${what} in the database, but broadcasting it on NATS failed (${failure}): the edge and ingress pick it up within their cache TTL; check NATS_URL`,
    exitCode: 1,
  };
}
