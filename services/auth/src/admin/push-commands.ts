import { readFileSync } from 'node:fs';
import { HeraldError, type PushCredentialsView, type PushSubscriptionView } from '@herald/proto';
import { PushClient } from '@herald/status-client';
import { PushEnvShape } from '../push/config.js';
import {
  parseApnsKey,
  parseFcmServiceAccount,
  parseRecipient,
  parseSubscriptionId,
  parseVapidSubject,
} from '../push/requests.js';
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
    flags: {
      account: 'string',
      vapid: 'string',
      'vapid-subject': 'string',
      'fcm-service-account': 'string',
      'apns-key': 'string',
      'apns-key-id': 'string',
      'apns-team-id': 'string',
      'apns-topic': 'string',
      'apns-sandbox': 'boolean',
    },
    required: ['account'],
    synopsis:
      'push configure --account ID [--vapid generate [--vapid-subject mailto:you@example.com|https://…]] [--fcm-service-account FILE] [--apns-key FILE.p8 --apns-key-id K --apns-team-id T --apns-topic BUNDLE [--apns-sandbox]] (private keys are kept sealed; each replaces any earlier one of its provider)',
    async run(ctx, flags) {
      const plan = configurePlan(flags);
      const account = await existingAccount(ctx, flags.account ?? '');
      const json: Record<string, unknown> = { account_id: account };
      const text: string[] = [];
      if (plan.vapid) {
        const vapid = await ask(ctx, (c) => c.configureVapid(account, plan.subject));
        Object.assign(json, { public_key: vapid.public_key, subject: vapid.subject });
        text.push(
          `Generated the Web Push (VAPID) key pair of account ${account}`,
          `  public key: ${vapid.public_key}`,
          '              (browsers subscribe with it: the SDK fetches it; any earlier pair is replaced, so earlier subscriptions stop receiving)',
          `  subject:    ${vapid.subject}`,
        );
      }
      if (plan.fcm) {
        const sa = plan.fcm;
        const { credentials } = await ask(ctx, (c) => c.configureFcm(account, sa));
        json.fcm = credentials.fcm;
        text.push(
          `Stored the FCM service account of account ${account}: project ${sa.project_id}, ${sa.client_email} (the private key sealed)`,
        );
      }
      if (plan.apns) {
        const k = plan.apns;
        const { credentials } = await ask(ctx, (c) => c.configureApns(account, k));
        json.apns = credentials.apns;
        text.push(
          `Stored the APNs key of account ${account}: key ${k.key_id}, team ${k.team_id}, topic ${k.topic}, ${k.sandbox ? 'sandbox' : 'production'} (the key sealed)`,
        );
      }
      return { json, text: text.join('\n') };
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

type Flags = Record<string, string | undefined>;

/** What `push configure` sets, its flags checked and files read before anything is asked. */
function configurePlan(flags: Flags) {
  const apnsFlags = ['apns-key', 'apns-key-id', 'apns-team-id', 'apns-topic'] as const;
  const anyApns = apnsFlags.some((f) => flags[f] !== undefined) || flags['apns-sandbox'] === 'true';
  if (flags.vapid === undefined && flags['fcm-service-account'] === undefined && !anyApns) {
    throw new HeraldError(
      'missing_field',
      'say what to configure: --vapid generate (Web Push), --fcm-service-account FILE (FCM), or --apns-key FILE --apns-key-id K --apns-team-id T --apns-topic BUNDLE (APNs)',
      { field: 'vapid' },
    );
  }
  if (flags.vapid !== undefined && flags.vapid !== 'generate') {
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
  const fcmFile = flags['fcm-service-account'];
  const fcm =
    fcmFile === undefined
      ? undefined
      : parseFcmServiceAccount(readFlagFile(fcmFile, 'fcm-service-account'), 'fcm-service-account');
  let apns: ReturnType<typeof parseApnsKey> | undefined;
  if (anyApns) {
    for (const f of apnsFlags) {
      if (flags[f] === undefined) {
        throw new HeraldError(
          'missing_field',
          `is required with the other --apns-* flags: APNs needs --apns-key FILE.p8 --apns-key-id K --apns-team-id T --apns-topic BUNDLE`,
          { field: f },
        );
      }
    }
    const flagOf: Record<string, string> = {
      key_pem: 'apns-key',
      key_id: 'apns-key-id',
      team_id: 'apns-team-id',
      topic: 'apns-topic',
    };
    apns = parseApnsKey(
      {
        key_pem: readFlagFile(flags['apns-key'] ?? '', 'apns-key'),
        key_id: flags['apns-key-id'],
        team_id: flags['apns-team-id'],
        topic: flags['apns-topic'],
        sandbox: flags['apns-sandbox'] === 'true',
      },
      (m) => flagOf[m] ?? 'apns-key',
    );
  }
  return { vapid: flags.vapid === 'generate', subject, fcm, apns };
}

/** A file a flag names, read; a missing or unreadable one is refused naming the flag. */
function readFlagFile(path: string, field: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (err) {
    throw new HeraldError(
      'invalid_field',
      `cannot read ${path} (${(err as NodeJS.ErrnoException).code ?? String(err)}): give the path of the file`,
      { field },
    );
  }
}

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
    `  fcm:           ${c.fcm.configured ? `configured, project ${c.fcm.project_id ?? '?'}, ${c.fcm.client_email ?? '?'}` : `not configured: \`push configure --account ${account} --fcm-service-account FILE\``}`,
    `  apns:          ${c.apns.configured ? `configured, key ${c.apns.key_id ?? '?'}, team ${c.apns.team_id ?? '?'}, topic ${c.apns.topic ?? '?'}${c.apns.sandbox ? ', sandbox' : ''}` : `not configured: \`push configure --account ${account} --apns-key FILE ...\``}`,
    `  subscriptions: ${c.subscriptions}`,
  ].join('\n');
}

function subscriptionText(s: PushSubscriptionView): string {
  return `  ${s.id}  ${s.recipient}  ${s.kind}  ${s.endpoint_origin ?? '-'}  device ${s.device ?? '-'}  created ${s.created_at}  last success ${s.last_success_at ?? 'never'}`;
}
