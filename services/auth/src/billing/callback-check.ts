import { digestsEqual, hashKey } from '@herald/access';
import { CallbackError, type CallbackResult, type PaymentProvider } from '@herald/payments';
import { HeraldError } from '@herald/proto';
import type { Kysely } from 'kysely';
import type { AuthDb, PaymentRow } from '../db-schema.js';
import type { BillingMetrics } from './metrics.js';
import { appendEvent, findPayment } from './store.js';

/** Compared against when a callback names no payment, so timing does not say which ids exist. */
const DUMMY_TOKEN_HASH = hashKey('herald-no-such-payment');

/** A provider callback that passed every check: its payment, what it says, and when it came. */
export interface CheckedCallback {
  payment: PaymentRow;
  cb: CallbackResult;
  now: Date;
}

/**
 * Checks a provider callback before anything believes it: the URL's token must match the
 * payment's (compared in constant time; anything else is `not_found` and changes nothing), the
 * body must be the provider's, and it must name the payment's own request. A refused body or
 * request is recorded in the payment's history.
 */
export async function checkCallback(
  deps: {
    db: Kysely<AuthDb>;
    provider: PaymentProvider;
    metrics?: BillingMetrics | undefined;
    /** Epoch ms. */
    now: () => number;
  },
  paymentId: string,
  token: string,
  body: unknown,
): Promise<CheckedCallback> {
  const { db, provider } = deps;
  const id = /^[0-9a-f-]{36}$/i.test(paymentId) ? paymentId.toLowerCase() : undefined;
  const payment = id === undefined ? undefined : await findPayment(db, id);
  const matches = digestsEqual(hashKey(token), payment?.callback_token_hash ?? DUMMY_TOKEN_HASH);
  if (!payment || !matches) {
    deps.metrics?.callbacksRefused.inc();
    throw new HeraldError('not_found', 'No such payment callback: check the callback URL');
  }
  const now = new Date(deps.now());
  let cb: CallbackResult;
  try {
    cb = provider.verifyCallback(body);
  } catch (err) {
    if (!(err instanceof CallbackError)) throw err;
    deps.metrics?.callbacksRefused.inc();
    await appendEvent(db, payment, now, {
      actor: 'provider:callback',
      action: 'callback_refused',
      detail: err.message,
    });
    throw new HeraldError('invalid_field', `The callback body is ${err.message}`, {
      field: 'body',
    });
  }
  if (payment.provider_ref !== null && cb.providerRef !== payment.provider_ref) {
    deps.metrics?.callbacksRefused.inc();
    await appendEvent(db, payment, now, {
      actor: 'provider:callback',
      action: 'callback_refused',
      detail: `callback names ${cb.providerRef}, the payment is ${payment.provider_ref}`,
    });
    throw new HeraldError(
      'invalid_field',
      'The callback names another CheckoutRequestID than this payment',
      { field: 'CheckoutRequestID' },
    );
  }
  return { payment, cb, now };
}
