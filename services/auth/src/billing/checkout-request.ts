import { normalisePhone } from '@herald/payments';
import { HeraldError, type Plan, type PlanCatalogue } from '@herald/proto';
import { parseId } from '../ids.js';
import { findPlan, planIds } from '../plan-catalogue.js';

/** What a checkout asks for, from the dashboard or the admin tool. */
export interface CheckoutRequest {
  accountId: string;
  plan: string;
  phone: string;
  /** Who asks: `account:<id>` or `admin:<user>`, for the audit trail. */
  actor: string;
}

/** A checkout request that passed its checks. */
export interface CheckedCheckout {
  accountId: string;
  /** A paid plan with a whole KES price. */
  plan: Plan;
  /** Normalised MSISDN, 2547XXXXXXXX. */
  phone: string;
}

/**
 * Checks a checkout before anything is written: the account id, a paid plan with a whole KES
 * price (M-Pesa takes whole shillings), and the phone. Throws a HeraldError naming `account`,
 * `plan` or `phone`, with the fix.
 */
export function checkCheckout(catalogue: PlanCatalogue, req: CheckoutRequest): CheckedCheckout {
  const accountId = parseId('account', req.accountId, 'give the account id');
  const plan = findPlan(catalogue, req.plan);
  const paid = catalogue.plans.filter((p) => p.paid).map((p) => p.id);
  if (!plan?.paid) {
    throw new HeraldError(
      'invalid_field',
      `plan "${req.plan}" cannot be bought: choose one of ${paid.join(', ') || '(no paid plan is offered)'}${plan ? '' : ` (the catalogue has ${planIds(catalogue)})`}`,
      { field: 'plan' },
    );
  }
  if (!Number.isInteger(plan.price.kes) || plan.price.kes <= 0) {
    throw new HeraldError(
      'invalid_field',
      `the ${plan.name} plan has no whole KES price in the plan catalogue: set price.kes (M-Pesa takes whole shillings)`,
      { field: 'plan' },
    );
  }
  const phone = normalisePhone(req.phone);
  if (!phone.ok) throw new HeraldError('invalid_field', phone.message, { field: 'phone' });
  return { accountId, plan, phone: phone.phone };
}
