import { Counter, type Registry } from 'prom-client';

const OUTCOMES = ['succeeded', 'failed', 'cancelled', 'timed_out'] as const;
const PROVIDER_CALLS = ['initiate', 'query'] as const;

export interface BillingMetrics {
  /** Payments settled, by outcome. */
  settled: Counter<'outcome'>;
  /** Provider calls that failed (network, credentials, refusals), by call. */
  providerErrors: Counter<'call'>;
  /** Callbacks refused: wrong token, bad body, or another payment's reference. */
  callbacksRefused: Counter;
}

export function createBillingMetrics(registry: Registry): BillingMetrics {
  const settled = new Counter({
    name: 'herald_auth_payments_settled_total',
    help: 'Payments settled, by outcome',
    labelNames: ['outcome'],
    registers: [registry],
  });
  for (const outcome of OUTCOMES) settled.inc({ outcome }, 0);
  const providerErrors = new Counter({
    name: 'herald_auth_payment_provider_errors_total',
    help: 'Payment provider calls that failed, by call',
    labelNames: ['call'],
    registers: [registry],
  });
  for (const call of PROVIDER_CALLS) providerErrors.inc({ call }, 0);
  const callbacksRefused = new Counter({
    name: 'herald_auth_payment_callbacks_refused_total',
    help: 'Payment callbacks refused (wrong token, bad body, another payment)',
    registers: [registry],
  });
  return { settled, providerErrors, callbacksRefused };
}
