import { Counter, Histogram, type Registry } from 'prom-client';

/** Every `result` label value, so dashboards see zeros instead of missing series. */
export const VERIFY_RESULTS = [
  'ok',
  'invalid_api_key',
  'key_revoked',
  'key_expired',
  'plan_inactive',
  'malformed',
  'internal',
] as const;
export type VerifyResult = (typeof VERIFY_RESULTS)[number];

/** Every `result` of a login attempt on the account API. */
export const LOGIN_RESULTS = ['ok', 'invalid_credentials', 'rate_limited'] as const;

export interface AuthMetrics {
  verifications: Counter<'result'>;
  verifyDuration: Histogram<'result'>;
  logins: Counter<'result'>;
  /** rt.auth.pusher answers (pusher/responder.ts), by the same results as verifications. */
  pusherLookups: Counter<'result'>;
}

export function createAuthMetrics(registry: Registry): AuthMetrics {
  const verifications = new Counter({
    name: 'herald_auth_verifications_total',
    help: 'Key verifications answered on rt.auth.verify, by result',
    labelNames: ['result'],
    registers: [registry],
  });
  const verifyDuration = new Histogram({
    name: 'herald_auth_verification_duration_seconds',
    help: 'Time from receiving an rt.auth.verify request to replying, by result',
    labelNames: ['result'],
    // Sub-millisecond when Postgres is close; the top buckets catch a saturated pool.
    buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
    registers: [registry],
  });
  const logins = new Counter({
    name: 'herald_auth_logins_total',
    help: 'Login attempts on the account API (POST /v1/sessions), by result',
    labelNames: ['result'],
    registers: [registry],
  });
  const pusherLookups = new Counter({
    name: 'herald_auth_pusher_lookups_total',
    help: 'Pusher app lookups answered on rt.auth.pusher, by result (invalid_api_key: no such app)',
    labelNames: ['result'],
    registers: [registry],
  });
  for (const result of VERIFY_RESULTS) verifications.inc({ result }, 0);
  for (const result of VERIFY_RESULTS) pusherLookups.inc({ result }, 0);
  for (const result of LOGIN_RESULTS) logins.inc({ result }, 0);
  return { verifications, verifyDuration, logins, pusherLookups };
}
