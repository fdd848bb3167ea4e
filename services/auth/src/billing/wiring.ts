import type { Logger } from '@herald/kit';
import { MpesaProvider, type PaymentProvider } from '@herald/payments';
import type { PlanCatalogue } from '@herald/proto';
import type { Kysely } from 'kysely';
import type { NatsConnection } from 'nats';
import type { Registry } from 'prom-client';
import type { AuthDb } from '../db-schema.js';
import { type BillingEnv, billingFromEnv } from './config.js';
import type { NoticeForwarder } from './dashboard-dispatch.js';
import { createBillingMetrics } from './metrics.js';
import { type BillingScheduler, startBillingScheduler } from './scheduler.js';
import { BillingService } from './service.js';

/**
 * The billing service and its scheduler, when BILLING_PROVIDER selects a provider; undefined
 * otherwise (plans then change through the admin tool only).
 */
export function createBilling(
  config: BillingEnv,
  deps: {
    db: Kysely<AuthDb>;
    nc: NatsConnection;
    catalogue: PlanCatalogue;
    logger: Logger;
    now: () => number;
    registry: Registry;
    forwarder?: NoticeForwarder;
  },
): { service: BillingService; scheduler: BillingScheduler } | undefined {
  const billing = billingFromEnv(config);
  if (!billing) return undefined;
  const provider: PaymentProvider = new MpesaProvider({ ...billing.daraja, now: deps.now });
  const metrics = createBillingMetrics(deps.registry);
  const service = new BillingService({ ...deps, provider, settings: billing.settings, metrics });
  const scheduler = startBillingScheduler(service, billing.settings.sweepIntervalMs, deps.logger);
  return { service, scheduler };
}
