import { HeraldError, type PushCredentialsView, type PushSubscriptionView } from '@herald/proto';
import { PushClient } from '@herald/status-client';
import { PushEnvShape } from '../push/config.js';
import { parseRecipient, parseSubscriptionId, parseVapidSubject } from '../push/requests.js';
import { type CommandGroup, command } from './command-types.js';
import type { AdminContext } from './context.js';
import { askStatus, existingAccount } from './status-requests.js';

/**
 * `push`: an account's push credentials and subscriptions (issue 40), kept by the status service
 * and asked for over NATS (`rt.pushapi.request`), the same requests the account API makes. This
 * release configures Web Push (VAPID) only. A refusal keeps its code and field (`--id: no push
 * subscription …`, exit 2); no answer within PUSH_API_TIMEOUT_MS is "status service unavailable"
 * (exit 1).
 */
export const pushCommands: CommandGroup = {
  'push configure': command({
    flags: { account: 'string', vapid: 'string', 'vapid-subject': 'string' },
    required: ['account', 'vapid'],
    synopsis:
      'push configure --account ID --vapid generate [--vapid-subject mailto:you@example.com|https://…] (a new Web Push key pair, replacing any: prints the public key; the private key is kept sealed)',
    async run(ctx, flags) {
      if (flags.vapid !== 'generate') {
        throw new HeraldError(
          'invalid_field',
          `takes only "generate" (got "${flags.vapid}"): Herald makes the VAPID key pair and keeps its private key sealed`,
          { field: 'vapid' },
        );
      }
      const subject =
        flags['vapid-subject'] === undefined
          ? undefined
          : parseVapidSubject(flags['vapid-subject'], 'vapid_subject');
      const account = await existingAccount(ctx, flags.account ?? '');
      const vapid = await ask(ctx, (c) => c.configureVapid(account, subject));
      return {
        json: { account_id: account, public_key: vapid.public_key, subject: vapid.subject },
        text: [
          `Generated the Web Push (VAPID) key pair of account ${account}`,
          `  public key: ${vapid.public_key}`,
          '              (browsers subscribe with it: the SDK fetches it; any earlier pair is replaced, so earlier subscriptions stop receiving)',
          `  subject:    ${vapid.subject}`,
        ].join('\n'),
      };
    },
  }),

  'push status': command({
    flags: { account: 'string' },
    required: ['account'],
    synopsis:
      "push status --account ID (the account's push credentials and how many subscriptions)",
    async run(ctx, flags) {
      const account = await existingAccount(ctx, flags.account ?? '');
      const { credentials } = await ask(ctx, (c) => c.status(account));
      return {
        json: { account_id: account, ...credentials },
        text: statusText(account, credentials),
      };
    },
  }),

  'push subscriptions': command({
    flags: { account: 'string', recipient: 'string' },
    required: ['account'],
    synopsis: 'push subscriptions --account ID [--recipient R] (never their keys)',
    async run(ctx, flags) {
      const recipient = flags.recipient === undefined ? undefined : parseRecipient(flags.recipient);
      const account = await existingAccount(ctx, flags.account ?? '');
      const { subscriptions } = await ask(ctx, (c) => c.list(account, recipient));
      const whose = recipient === undefined ? `account ${account}` : `recipient ${recipient}`;
      return {
        json: { subscriptions },
        text: subscriptions.length
          ? [
              `${subscriptions.length} push subscription(s) of ${whose}:`,
              ...subscriptions.map(subscriptionText),
            ].join('\n')
          : `No push subscriptions of ${whose}: apps register them with the SDK's herald.push.subscribe()`,
      };
    },
  }),

  'push unsubscribe': command({
    flags: { account: 'string', id: 'string' },
    required: ['account', 'id'],
    synopsis: 'push unsubscribe --account ID --id SUBSCRIPTION_ID (nothing more is pushed to it)',
    async run(ctx, flags) {
      const id = parseSubscriptionId(flags.id ?? '');
      const account = await existingAccount(ctx, flags.account ?? '');
      const { subscription } = await ask(ctx, (c) => c.unsubscribe(account, id));
      return {
        json: { ...subscription },
        text: `Deleted push subscription ${subscription.id} of recipient ${subscription.recipient} (${subscription.kind}${subscription.endpoint_origin ? `, ${subscription.endpoint_origin}` : ''})`,
      };
    },
  }),

  'push test': command({
    flags: { account: 'string', id: 'string' },
    required: ['account', 'id'],
    synopsis:
      'push test --account ID --id SUBSCRIPTION_ID (sends a test push now; prints what the push service answered)',
    async run(ctx, flags) {
      const id = parseSubscriptionId(flags.id ?? '');
      const account = await existingAccount(ctx, flags.account ?? '');
      const tested = await ask(ctx, (c) => c.test(account, id));
      const result =
        tested.http_status === null
          ? `no answer (${tested.error ?? 'no error given'})`
          : `HTTP ${tested.http_status}${tested.error ? ` (${tested.error})` : ''}`;
      return {
        json: { id, ...pick(tested) },
        text: `Test push to subscription ${id}: the push service answered ${result} in ${tested.latency_ms} ms`,
      };
    },
  }),
};

/** A request to the status service, with PUSH_API_TIMEOUT_MS's timeout. */
function ask<T>(ctx: AdminContext, call: (client: PushClient) => Promise<T>): Promise<T> {
  return askStatus(
    ctx,
    { variable: 'PUSH_API_TIMEOUT_MS', schema: PushEnvShape.PUSH_API_TIMEOUT_MS },
    (nc, timeoutMs) => new PushClient(nc, timeoutMs),
    call,
  );
}

function pick(t: { http_status: number | null; error: string | null; latency_ms: number }) {
  return { http_status: t.http_status, error: t.error, latency_ms: t.latency_ms };
}

function statusText(account: string, c: PushCredentialsView): string {
  const webpush = c.webpush.configured
    ? `configured, public key ${c.webpush.public_key ?? '?'}, subject ${c.webpush.subject ?? '-'}`
    : `not configured: \`push configure --account ${account} --vapid generate\``;
  return [
    `Push set-up of account ${account}:`,
    `  webpush:       ${webpush}`,
    `  fcm:           ${c.fcm.configured ? 'configured' : 'not configured'}`,
    `  apns:          ${c.apns.configured ? 'configured' : 'not configured'}`,
    `  subscriptions: ${c.subscriptions}`,
  ].join('\n');
}

function subscriptionText(s: PushSubscriptionView): string {
  return `  ${s.id}  ${s.recipient}  ${s.kind}  ${s.endpoint_origin ?? '-'}  device ${s.device ?? '-'}  created ${s.created_at}  last success ${s.last_success_at ?? 'never'}`;
}
