import { CALLBACK_ACK } from '@herald/payments';
import { HeraldError } from '@herald/proto';
import type Router from '@koa/router';
import { z } from 'zod';
import type { RouteMount } from '../account-api/app.js';
import type { AccountApiDeps } from '../account-api/deps.js';
import { parseBody, readJson } from '../account-api/json-body.js';
import { requireSession, type SessionState } from '../account-api/session-auth.js';
import { parseId } from '../ids.js';
import { findPlan } from '../plan-catalogue.js';
import { findSubscription } from '../subscriptions.js';
import { renewalView } from './reminders.js';
import type { BillingService } from './service.js';
import { findPayment, listPayments, paymentEvents } from './store.js';
import { eventView, paymentView } from './views.js';

/** Most payments `GET /v1/billing/payments` lists, newest first. */
const HISTORY_LIMIT = 50;

export const CheckoutBody = z
  .object({
    plan: z.string({ error: 'plan is required: the id of a paid plan, such as hobby' }),
    phone: z.string({
      error: 'phone is required: the M-Pesa number to prompt, such as 0712345678',
    }),
  })
  .strict();
export type CheckoutBody = z.infer<typeof CheckoutBody>;

/**
 * The dashboard's billing routes (session, CSRF on POST) and the provider's callback route (no
 * session: authenticated by the secret token in its URL), as a mount of the account API. Without
 * a billing service (BILLING_PROVIDER=none) the routes that pay answer 503 `unavailable`.
 */
export function billingRoutes(billing: BillingService | undefined): RouteMount {
  return (router, deps) => mountBillingRoutes(router, deps, billing);
}

function mountBillingRoutes(
  router: Router<SessionState>,
  deps: AccountApiDeps,
  billing: BillingService | undefined,
): void {
  const { db, settings } = deps;
  const session = requireSession(db, deps.now);
  const enabled = (): BillingService => {
    if (billing) return billing;
    throw new HeraldError(
      'unavailable',
      'Payments are not enabled on this server: its operator sets BILLING_PROVIDER=mpesa (docs/operations.md, "Billing")',
    );
  };

  router.post('/v1/billing/checkout', session, async (ctx) => {
    const service = enabled();
    const body = parseBody(CheckoutBody, await readJson(ctx, settings.bodyLimitBytes));
    const accountId = ctx.state.session.account_id;
    const payment = await service.checkout({
      accountId,
      plan: body.plan,
      phone: body.phone,
      actor: `account:${accountId}`,
    });
    ctx.status = 201;
    ctx.body = paymentView(payment);
  });

  router.get('/v1/billing/payments', session, async (ctx) => {
    const rows = await listPayments(db, ctx.state.session.account_id, HISTORY_LIMIT);
    ctx.body = { payments: rows.map(paymentView) };
  });

  router.get('/v1/billing/payments/:id', session, async (ctx) => {
    const id = parseId('id', ctx.params.id ?? '', 'use an id from GET /v1/billing/payments');
    const payment = await findPayment(db, id);
    // Another account's payment is as absent as one that never existed.
    if (!payment || payment.account_id !== ctx.state.session.account_id) {
      throw new HeraldError('not_found', `payment ${id} does not exist in this account`, {
        field: 'id',
      });
    }
    ctx.body = { ...paymentView(payment), history: (await paymentEvents(db, id)).map(eventView) };
  });

  router.get('/v1/billing/subscription', session, async (ctx) => {
    const sub = await findSubscription(db, ctx.state.session.account_id);
    const plan = sub ? findPlan(deps.catalogue, sub.plan) : undefined;
    const reminderMs = billing?.settings.reminderMs ?? 0;
    ctx.body = {
      plan: sub?.plan ?? null,
      paid: plan?.paid ?? false,
      price: plan?.price ?? null,
      renewal: renewalView(sub, plan?.paid ?? false, deps.now(), reminderMs),
      payments_enabled: billing !== undefined,
    };
  });

  router.post('/v1/billing/callbacks/:payment/:token', async (ctx) => {
    const service = enabled();
    const body = await readJson(ctx, settings.bodyLimitBytes);
    await service.callback(ctx.params.payment ?? '', ctx.params.token ?? '', body);
    ctx.body = CALLBACK_ACK;
  });
}
