import { randomBytes } from 'node:crypto';
import { hashKey } from '@herald/access';
import type { Logger } from '@herald/kit';
import {
  type CallbackResult,
  maskPhone,
  type PaymentProvider,
  ProviderError,
  type ProviderResult,
} from '@herald/payments';
import { HeraldError, type PlanCatalogue } from '@herald/proto';
import type { Kysely } from 'kysely';
import type { NatsConnection } from 'nats';
import type { AuthDb, PaymentRow } from '../db-schema.js';
import { planChangedMessage, publishInvalidation } from '../invalidation.js';
import { isPgError, PgCodes } from '../pg-errors.js';
import { checkCallback } from './callback-check.js';
import { type CheckoutRequest, checkCheckout } from './checkout-request.js';
import type { BillingSettings } from './config.js';
import type { NoticeForwarder } from './dashboard-dispatch.js';
import type { BillingMetrics } from './metrics.js';
import { paymentNotice, publishNotice, reminderNotice } from './notices.js';
import { claimDueReminders } from './reminders.js';
import { judgeSettlement } from './settlement.js';
import {
  appendEvent,
  duePayments,
  insertPayment,
  markInitiated,
  type Settlement,
  scheduleNextQuery,
  settlePayment,
} from './store.js';

/** Most pending payments one sweep queries, and reminders it sends. */
const SWEEP_BATCH = 100;

export interface BillingDeps {
  db: Kysely<AuthDb>;
  nc: NatsConnection;
  catalogue: PlanCatalogue;
  provider: PaymentProvider;
  settings: BillingSettings;
  logger: Logger;
  /** Epoch ms; injectable for tests. */
  now: () => number;
  metrics?: BillingMetrics;
  /** Carries every notice to the account's dashboard over Herald; core NATS only when absent. */
  forwarder?: NoticeForwarder;
}

/** What one sweep did (for tests and logs). */
export interface SweepResult {
  queried: number;
  settled: number;
  reminders: number;
}

/**
 * The payment flow: checkout sends the prompt; callbacks, queries and the timeout settle the
 * payment exactly once (store.ts settlePayment); a success extends the subscription and is
 * broadcast so Live keys work at once.
 */
export class BillingService {
  readonly #deps: BillingDeps;

  constructor(deps: BillingDeps) {
    this.#deps = deps;
  }

  get settings(): BillingSettings {
    return this.#deps.settings;
  }

  /**
   * Creates the payment and sends the prompt. Throws HeraldError naming `plan`, `phone` or
   * `account`; `payment_in_progress` while another payment of the account waits for its answer;
   * `unavailable` when the provider did not take the request (the payment is then failed).
   */
  async checkout(req: CheckoutRequest): Promise<PaymentRow> {
    const { db, provider, settings } = this.#deps;
    const { accountId, plan, phone } = checkCheckout(this.#deps.catalogue, req);

    const now = new Date(this.#deps.now());
    const token = randomBytes(32).toString('base64url');
    let payment: PaymentRow;
    try {
      payment = await insertPayment(db, {
        account_id: accountId,
        plan: plan.id,
        provider: provider.name,
        currency: provider.currency,
        amount_minor: plan.price.kes * 100,
        phone,
        callback_token_hash: hashKey(token),
        created_by: req.actor,
        created_at: now,
        expires_at: new Date(now.getTime() + settings.paymentTimeoutMs),
        next_query_at: new Date(now.getTime() + settings.queryIntervalMs),
      });
    } catch (err) {
      if (isPgError(err, PgCodes.uniqueViolation)) {
        const pending = await db
          .selectFrom('payments')
          .select(['id', 'expires_at'])
          .where('account_id', '=', accountId)
          .where('status', '=', 'pending')
          .executeTakeFirst();
        throw new HeraldError(
          'payment_in_progress',
          `payment ${pending?.id ?? ''} of this account is still waiting for the answer on the phone: answer or cancel the M-Pesa prompt, or wait until ${pending?.expires_at.toISOString() ?? 'it times out'}, then try again`,
          { field: 'account' },
        );
      }
      if (isPgError(err, PgCodes.foreignKeyViolation)) {
        throw new HeraldError('not_found', `account ${accountId} does not exist`, {
          field: 'account',
        });
      }
      throw err;
    }

    try {
      const initiated = await provider.initiate({
        amount: plan.price.kes,
        phone,
        reference: `HERALD ${plan.id}`.toUpperCase(),
        description: `Herald ${plan.name}`,
        callbackUrl: `${settings.callbackBaseUrl}/v1/billing/callbacks/${payment.id}/${token}`,
      });
      const sent = await markInitiated(
        db,
        payment,
        { providerRef: initiated.providerRef, merchantRef: initiated.merchantRef ?? null },
        new Date(this.#deps.now()),
        req.actor,
      );
      // The dashboard shows "check your phone" from this, then the outcome from #settle's notice.
      publishNotice(this.#deps.nc, paymentNotice(sent, this.#deps.now()), this.#deps.forwarder);
      return sent;
    } catch (err) {
      if (!(err instanceof ProviderError)) throw err;
      this.#deps.metrics?.providerErrors.inc({ call: 'initiate' });
      this.#deps.logger.warn(
        { payment: payment.id, err: err.message },
        'payment provider refused the request',
      );
      await this.#settle(payment.id, {
        outcome: 'failed',
        resultCode: null,
        reason: 'M-Pesa did not accept the payment request: try again in a minute',
        receipt: null,
        actor: 'provider:initiate',
        detail: err.message,
      });
      throw new HeraldError(
        'unavailable',
        `M-Pesa did not accept the payment request (payment ${payment.id} is marked failed): try again in a minute`,
        { field: 'phone', cause: err },
      );
    }
  }

  /**
   * Handles a provider callback once it passed its checks (callback-check.ts: the URL's token,
   * the body, the request it names). The callback is then only a hint: the result is confirmed
   * with a query before the payment is settled.
   */
  async callback(paymentId: string, token: string, body: unknown): Promise<void> {
    const { payment, cb, now } = await checkCallback(this.#deps, paymentId, token, body);
    await appendEvent(this.#deps.db, payment, now, {
      actor: 'provider:callback',
      action: 'callback',
      resultCode: cb.result.code,
      receipt: cb.receipt ?? null,
      detail: `callback says ${cb.result.status}${cb.amount === undefined ? '' : `, amount ${cb.amount}`}${cb.phone === undefined ? '' : `, phone ${maskPhone(cb.phone)}`}`,
    });
    // A duplicate or late callback of a settled payment is acknowledged and changes nothing.
    if (payment.status !== 'pending') return;
    await this.#resolve(payment, cb);
  }

  /**
   * Runs the schedule once: queries due pending payments (timing out those past their deadline)
   * and sends due renewal reminders. Errors of one payment do not stop the others.
   */
  async sweep(): Promise<SweepResult> {
    const { db, catalogue, nc, settings, logger } = this.#deps;
    const now = new Date(this.#deps.now());
    const result: SweepResult = { queried: 0, settled: 0, reminders: 0 };
    for (const payment of await duePayments(db, now, SWEEP_BATCH)) {
      try {
        result.queried++;
        if (await this.#resolve(payment, undefined)) result.settled++;
      } catch (err) {
        logger.error({ err, payment: payment.id }, 'billing sweep: resolving a payment failed');
      }
    }
    const reminders = await claimDueReminders(db, catalogue, now, settings.reminderMs, SWEEP_BATCH);
    for (const r of reminders) {
      publishNotice(
        nc,
        reminderNotice(r.account_id, r.plan, r.period_end, now.getTime()),
        this.#deps.forwarder,
      );
    }
    result.reminders = reminders.length;
    return result;
  }

  /**
   * Queries the provider and settles the payment by the query's answer; the callback (when one
   * came) must agree, and a success must match the payment's amount and phone. Resolves true
   * when this call settled it.
   */
  async #resolve(payment: PaymentRow, cb: CallbackResult | undefined): Promise<boolean> {
    const { db, provider, settings } = this.#deps;
    const now = new Date(this.#deps.now());
    const expired = now.getTime() >= payment.expires_at.getTime();
    const timeout = (detail: string) =>
      this.#settle(payment.id, {
        outcome: 'timed_out',
        resultCode: null,
        reason:
          'M-Pesa gave no answer in time: check the phone for the prompt and its SMS, then try again',
        receipt: null,
        actor: 'scheduler',
        detail,
      });
    if (payment.provider_ref === null) {
      // The request to the provider never completed (a crash mid-checkout): nothing to ask.
      if (expired) return (await timeout('no provider reference by the deadline')) !== undefined;
      return false;
    }
    let result: ProviderResult;
    try {
      result = await provider.query(payment.provider_ref);
    } catch (err) {
      if (!(err instanceof ProviderError)) throw err;
      this.#deps.metrics?.providerErrors.inc({ call: 'query' });
      await appendEvent(db, payment, now, {
        actor: 'provider:query',
        action: 'query_failed',
        detail: err.message,
      });
      if (expired)
        return (await timeout(`query failed at the deadline: ${err.message}`)) !== undefined;
      await scheduleNextQuery(db, payment.id, new Date(now.getTime() + settings.queryIntervalMs));
      return false;
    }
    await appendEvent(db, payment, now, {
      actor: 'provider:query',
      action: 'query',
      resultCode: result.status === 'pending' ? null : result.code,
      detail: result.status === 'pending' ? result.detail : `query says ${result.status}`,
    });
    if (result.status === 'pending') {
      if (expired) return (await timeout('still being processed at the deadline')) !== undefined;
      await scheduleNextQuery(db, payment.id, new Date(now.getTime() + settings.queryIntervalMs));
      return false;
    }
    const settlement = judgeSettlement(payment, result, cb);
    return (await this.#settle(payment.id, settlement)) !== undefined;
  }

  /** Settles once; on a change, broadcasts the plan change (success) and the account notice. */
  async #settle(id: string, settlement: Settlement): Promise<PaymentRow | undefined> {
    const { db, catalogue, nc, logger } = this.#deps;
    const now = this.#deps.now();
    const row = await settlePayment(db, catalogue, id, settlement, new Date(now));
    if (!row) return undefined;
    this.#deps.metrics?.settled.inc({ outcome: row.status });
    logger.info(
      { payment: row.id, account: row.account_id, status: row.status, code: row.result_code },
      'payment settled',
    );
    if (row.status === 'succeeded') {
      try {
        // Cached "no paid plan" answers go now, so a Live key works at once.
        await publishInvalidation(nc, planChangedMessage(row.account_id));
      } catch (err) {
        logger.warn({ err, account: row.account_id }, 'plan change broadcast failed');
      }
    }
    publishNotice(nc, paymentNotice(row, now), this.#deps.forwarder);
    return row;
  }
}
