import type { WebhookAttempt, WebhookEndpoint } from '@herald/proto';
import { WebhookClient } from '@herald/status-client';
import { WebhookEnvShape } from '../webhooks/config.js';
import { parseEventsFlag, parseSince } from '../webhooks/requests.js';
import { type CommandGroup, type CommandOutput, command } from './command-types.js';
import type { AdminContext } from './context.js';
import { askStatus, existingAccount } from './status-requests.js';

const SECRET_NOTE =
  '(shown only now: your backend verifies each delivery with it, Standard Webhooks; Herald keeps it sealed)';

/**
 * `webhook`: an account's delivery-status webhook endpoints, kept by the status service and asked
 * for over NATS (`rt.webhookapi.request`), the same requests the account API makes. A refusal keeps
 * its code and field (`--id: no webhook endpoint …`, exit 2); no answer within
 * WEBHOOK_API_TIMEOUT_MS is "status service unavailable" (exit 1).
 */
export const webhookCommands: CommandGroup = {
  'webhook create': command({
    flags: { account: 'string', url: 'string', events: 'string' },
    required: ['account', 'url'],
    synopsis:
      'webhook create --account ID --url https://… [--events event.sent,event.queued,event.delivered,event.failed,event.read (default: every type)] (its secret is shown once)',
    async run(ctx, flags) {
      const account = await existingAccount(ctx, flags.account ?? '');
      const events = flags.events === undefined ? undefined : parseEventsFlag(flags.events);
      const { endpoint, secret } = await ask(ctx, (c) =>
        c.create(account, flags.url ?? '', events),
      );
      return {
        json: { id: endpoint.id, url: endpoint.url, events: endpoint.events, secret },
        text: [
          `Created webhook endpoint ${endpoint.id} for account ${account}`,
          `  url:     ${endpoint.url}`,
          `  events:  ${endpoint.events.join(', ')}`,
          `  secret:  ${secret}`,
          `           ${SECRET_NOTE}`,
        ].join('\n'),
      };
    },
  }),

  'webhook list': command({
    flags: { account: 'string' },
    required: ['account'],
    synopsis: 'webhook list --account ID',
    async run(ctx, flags) {
      const account = await existingAccount(ctx, flags.account ?? '');
      const { endpoints } = await ask(ctx, (c) => c.list(account));
      return {
        json: { endpoints },
        text: endpoints.length
          ? [
              `${endpoints.length} webhook endpoint(s) of account ${account}:`,
              ...endpoints.map(
                (e) => `  ${e.id}  ${e.url}  ${stateText(e)}\n    events: ${e.events.join(', ')}`,
              ),
            ].join('\n')
          : `Account ${account} has no webhook endpoints: create one with \`webhook create --account ${account} --url https://…\``,
      };
    },
  }),

  'webhook delete': command({
    flags: { id: 'string' },
    required: ['id'],
    synopsis:
      'webhook delete --id ENDPOINT_ID (nothing more is sent to it, queued messages included)',
    async run(ctx, flags) {
      const { endpoint } = await ask(ctx, (c) => c.delete(flags.id ?? ''));
      return endpointOutput(endpoint, `Deleted webhook endpoint ${endpoint.id} (${endpoint.url})`);
    },
  }),

  'webhook rotate-secret': command({
    flags: { id: 'string' },
    required: ['id'],
    synopsis:
      'webhook rotate-secret --id ENDPOINT_ID (a new secret, shown once; the old one keeps signing beside it for WEBHOOK_SECRET_OVERLAP_MS, 24 h by default)',
    async run(ctx, flags) {
      const { endpoint, secret } = await ask(ctx, (c) => c.rotateSecret(flags.id ?? ''));
      return {
        json: { id: endpoint.id, url: endpoint.url, secret },
        text: [
          `Rotated the secret of webhook endpoint ${endpoint.id} (${endpoint.url})`,
          `  secret:  ${secret}`,
          `           ${SECRET_NOTE}`,
          '  the previous secret keeps signing beside it (two v1, signatures) for the overlap, 24 h by default',
        ].join('\n'),
      };
    },
  }),

  'webhook enable': command({
    flags: { id: 'string' },
    required: ['id'],
    synopsis:
      'webhook enable --id ENDPOINT_ID (after it was disabled: 410 Gone, or failing too long)',
    async run(ctx, flags) {
      const { endpoint } = await ask(ctx, (c) => c.enable(flags.id ?? ''));
      return endpointOutput(
        endpoint,
        `Enabled webhook endpoint ${endpoint.id} (${endpoint.url}); \`webhook replay --id ${endpoint.id} --since TIME\` sends what it missed`,
      );
    },
  }),

  'webhook attempts': command({
    flags: { id: 'string' },
    required: ['id'],
    synopsis: 'webhook attempts --id ENDPOINT_ID (its recent attempts, newest first)',
    async run(ctx, flags) {
      const { attempts } = await ask(ctx, (c) => c.attempts(flags.id ?? ''));
      return {
        json: { attempts },
        text: attempts.length
          ? [
              `${attempts.length} recent attempt(s), newest first:`,
              ...attempts.map(attemptText),
            ].join('\n')
          : `No attempts yet to webhook endpoint ${flags.id}: \`webhook test --id ${flags.id}\` sends one`,
      };
    },
  }),

  'webhook test': command({
    flags: { id: 'string' },
    required: ['id'],
    synopsis: 'webhook test --id ENDPOINT_ID (queues one webhook.test message to it)',
    async run(ctx, flags) {
      const queued = await ask(ctx, (c) => c.test(flags.id ?? ''));
      return {
        json: { message_id: queued.message_id ?? null, queued: queued.queued },
        text: `Queued test message ${queued.message_id ?? ''} to webhook endpoint ${flags.id}: \`webhook attempts --id ${flags.id}\` shows how it went`,
      };
    },
  }),

  'webhook replay': command({
    flags: { id: 'string', since: 'string' },
    required: ['id', 'since'],
    synopsis:
      "webhook replay --id ENDPOINT_ID --since 2025-07-01T12:00:00Z (every transition of the account's events since then, sent again with the same webhook-id)",
    async run(ctx, flags) {
      const since = parseSince(flags.since ?? '');
      const queued = await ask(ctx, (c) => c.replay(flags.id ?? '', since));
      return {
        json: { queued: queued.queued },
        text: `Queued ${queued.queued} message(s) since ${new Date(since).toISOString()} to webhook endpoint ${flags.id}`,
      };
    },
  }),
};

/** A request to the status service, with WEBHOOK_API_TIMEOUT_MS's timeout. */
function ask<T>(ctx: AdminContext, call: (client: WebhookClient) => Promise<T>): Promise<T> {
  return askStatus(
    ctx,
    { variable: 'WEBHOOK_API_TIMEOUT_MS', schema: WebhookEnvShape.WEBHOOK_API_TIMEOUT_MS },
    (nc, timeoutMs) => new WebhookClient(nc, timeoutMs),
    call,
  );
}

function endpointOutput(endpoint: WebhookEndpoint, headline: string): CommandOutput {
  return {
    json: { ...endpoint },
    text: [headline, `  state:   ${stateText(endpoint)}`].join('\n'),
  };
}

/** Active, failing since, or disabled with its reason; and what waits to be sent. */
function stateText(e: WebhookEndpoint): string {
  const state = e.disabled_at
    ? `disabled ${e.disabled_at} (${e.disabled_reason ?? 'no reason given'})`
    : e.failing_since
      ? `active, failing since ${e.failing_since}`
      : 'active';
  return `${state}, ${e.pending} pending`;
}

function attemptText(a: WebhookAttempt): string {
  const result = a.http_status === null ? (a.error ?? 'no answer') : `HTTP ${a.http_status}`;
  return `  ${a.at}  ${a.type}  ${result}  ${a.latency_ms} ms  ${a.message_id}`;
}
