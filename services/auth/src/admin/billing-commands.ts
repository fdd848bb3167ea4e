import { createLogger } from '@herald/kit';
import { MpesaProvider } from '@herald/payments';
import { HeraldError } from '@herald/proto';
import { billingFromEnv, parseBillingEnv } from '../billing/config.js';
import { BillingService } from '../billing/service.js';
import { findPayment, paymentEvents } from '../billing/store.js';
import { eventView, paymentView } from '../billing/views.js';
import type { PaymentRow } from '../db-schema.js';
import { parseId } from '../ids.js';
import { type CommandGroup, type CommandOutput, command, type Flags } from './command-types.js';
import type { AdminContext } from './context.js';

/** `billing`: payments (billing/), for support and scripts. */
export const billingCommands: CommandGroup = {
  'billing checkout': command({
    flags: { account: 'string', plan: 'string', phone: 'string' },
    required: ['account', 'plan', 'phone'],
    synopsis: 'billing checkout --account ID --plan P --phone N (sends an M-Pesa prompt)',
    run: billingCheckout,
  }),
  'billing show': command({
    flags: { payment: 'string' },
    required: ['payment'],
    synopsis: 'billing show --payment ID (its state and history)',
    run: billingShow,
  }),
};

/**
 * `billing checkout`: sends the prompt for support or a script, as the dashboard does. The
 * result reaches the running auth service (callback or its scheduled query), not this command:
 * follow it with `billing show`.
 */
async function billingCheckout(ctx: AdminContext, flags: Flags): Promise<CommandOutput> {
  const billing = billingFromEnv(parseBillingEnv(ctx.env));
  if (!billing) {
    throw new Error(
      'payments are not enabled: set BILLING_PROVIDER=mpesa and the MPESA_* variables (docs/operations.md, "Billing")',
    );
  }
  const service = new BillingService({
    db: ctx.db(),
    nc: await ctx.nats(),
    catalogue: ctx.catalogue(),
    provider: new MpesaProvider(billing.daraja),
    settings: billing.settings,
    logger: createLogger('admin', 'silent'),
    now: Date.now,
  });
  const user = ctx.env.USER ?? ctx.env.LOGNAME ?? 'unknown';
  const payment = await service.checkout({
    accountId: flags.account ?? '',
    plan: flags.plan ?? '',
    phone: flags.phone ?? '',
    actor: `admin:${user}`,
  });
  return {
    json: paymentView(payment),
    text: `${summary(payment)}\n  the prompt is on ${paymentView(payment).phone}: follow it with \`billing show --payment ${payment.id}\``,
  };
}

/** `billing show`: a payment's state and its audit trail. */
async function billingShow(ctx: AdminContext, flags: Flags): Promise<CommandOutput> {
  const id = parseId('payment', flags.payment ?? '', 'give the id `billing checkout` printed');
  const payment = await findPayment(ctx.db(), id);
  if (!payment) {
    throw new HeraldError('not_found', `payment ${id} does not exist: check the id`, {
      field: 'payment',
    });
  }
  const history = (await paymentEvents(ctx.db(), id)).map(eventView);
  const lines = history.map(
    (e) =>
      `  ${e.at}  ${e.action.padEnd(22)} ${e.actor}${e.result_code ? ` code ${e.result_code}` : ''}${e.receipt ? ` receipt ${e.receipt}` : ''}${e.detail ? `: ${e.detail}` : ''}`,
  );
  return {
    json: { ...paymentView(payment), history },
    text: [summary(payment), 'History:', ...lines].join('\n'),
  };
}

function summary(p: PaymentRow): string {
  const v = paymentView(p);
  const extra = [
    v.receipt ? `receipt ${v.receipt}` : '',
    v.reason ? `reason: ${v.reason}` : '',
    v.period_end ? `paid until ${v.period_end}` : '',
  ].filter(Boolean);
  return `Payment ${v.id} (${v.plan} plan, ${v.amount.currency} ${v.amount.major}, account ${v.account_id}) is ${v.status}${extra.length ? `; ${extra.join('; ')}` : ''}`;
}
