import { useCallback, useEffect, useState } from 'react';
import {
  type Account,
  api,
  type Counts,
  type DashboardConfig,
  errorText,
  type Limits,
  type Plan,
} from './api.js';
import { type Payment, pendingPayment, type Subscription } from './billing.js';
import { Checkout } from './Checkout.js';
import { when } from './KeysPage.js';
import { PastPayments } from './PastPayments.js';
import { useBillingListener } from './useBillingListener.js';

export function PlanPage({
  account,
  onAccountChanged,
}: {
  account: Account;
  /** Re-reads the account (its plan, period end and limits) after a payment succeeds. */
  onAccountChanged: () => Promise<void>;
}) {
  const [plans, setPlans] = useState<Plan[]>([]);
  const [conns, setConns] = useState<{ live: number; test: number } | undefined>();
  const [minute, setMinute] = useState<Counts | undefined>();
  const [config, setConfig] = useState<DashboardConfig | undefined>();
  const [error, setError] = useState('');
  const [sub, setSub] = useState<Subscription | undefined>();
  const [payments, setPayments] = useState<Payment[]>([]);
  const [paying, setPaying] = useState<{ plan: Plan; resume?: Payment } | undefined>();
  // The page's own Herald socket: payment progress and renewal reminders arrive on it.
  const live = useBillingListener();
  const loadSubscription = useCallback(
    () => api<Subscription>('GET', '/v1/billing/subscription').then(setSub),
    [],
  );
  useEffect(() => {
    if (live.reminders > 0) void loadSubscription().catch((err) => setError(errorText(err)));
  }, [live.reminders, loadSubscription]);
  useEffect(() => {
    Promise.all([
      loadSubscription(),
      // A payment still pending (the page was reloaded mid-payment) is followed again.
      Promise.all([
        api<{ plans: Plan[] }>('GET', '/v1/plans'),
        api<{ payments: Payment[] }>('GET', '/v1/billing/payments'),
      ]).then(([catalogue, history]) => {
        setPayments(history.payments);
        const pending = pendingPayment(history.payments);
        const plan = pending && catalogue.plans.find((p) => p.id === pending.plan);
        if (pending && plan) setPaying({ plan, resume: pending });
      }),
      api<{ plans: Plan[] }>('GET', '/v1/plans').then((r) => setPlans(r.plans)),
      api<{ live: number; test: number }>('GET', '/v1/dashboard/connections').then(setConns),
      api<DashboardConfig>('GET', '/v1/dashboard/config').then(setConfig),
      api<{ series: Array<Counts & { t: string }> }>(
        'GET',
        '/v1/dashboard/status?window=hour',
      ).then((r) => setMinute(r.series.at(-1))),
    ]).catch((err) => setError(errorText(err)));
  }, [loadSubscription]);
  const settled = useCallback(
    (p: Payment) => {
      // The list of payments shows every settled one, paid or not.
      void api<{ payments: Payment[] }>('GET', '/v1/billing/payments').then(
        (r) => setPayments(r.payments),
        () => undefined,
      );
      if (p.status !== 'succeeded') return;
      void onAccountChanged();
      void loadSubscription().catch((err) => setError(errorText(err)));
    },
    [onAccountChanged, loadSubscription],
  );
  const payable = (p: Plan) => p.paid && sub?.payments_enabled === true;
  // A free account holds only its Test key, whose limits are the catalogue's test_key_limits:
  // the free plan's own limits would apply to Live keys it cannot have.
  const liveLimits = account.plan.paid ? account.limits : null;
  const dispatchedLastMinute = minute ? minute.sent + minute.pending + minute.failed : undefined;
  return (
    <section aria-labelledby="plan-title">
      <h1 id="plan-title">Plan</h1>
      {error && (
        <p role="alert" className="error">
          {error}
        </p>
      )}
      <RenewalNotice sub={sub} planName={account.plan.name} />
      <div className="card">
        <h2>
          {account.plan.name} <span className="badge">{account.status}</span>
        </h2>
        <dl className="facts">
          <dt>Period ends</dt>
          <dd data-testid="period-end">
            {account.period_end ? when(account.period_end) : 'never (free plan)'}
          </dd>
          <dt>Dispatches in the current minute</dt>
          <dd>{dispatchedLastMinute ?? '…'}</dd>
        </dl>
        <div className="table-wrap">
          <table className="limits">
            <caption>Limits</caption>
            <thead>
              <tr>
                <td />
                {liveLimits && <th scope="col">Live keys ({account.plan.name})</th>}
                <th scope="col">Test key</th>
              </tr>
            </thead>
            <tbody>
              <LimitRow
                name="Open connections"
                id="connections"
                live={liveLimits && `${conns?.live ?? '…'} of ${liveLimits.connections}`}
                test={`${conns?.test ?? '…'} of ${account.test_key_limits.connections}`}
              />
              <LimitRow
                name="Dispatch rate, per key"
                id="rate"
                live={liveLimits && rate(liveLimits)}
                test={rate(account.test_key_limits)}
              />
              <LimitRow
                name="Queued events per recipient"
                id="queue"
                live={liveLimits && `at most ${liveLimits.queue_per_recipient}`}
                test={`at most ${account.test_key_limits.queue_per_recipient}`}
              />
            </tbody>
          </table>
        </div>
        {!liveLimits && (
          <p className="hint">
            A free account holds only its Test key: these are its limits. Live keys come with a paid
            plan, below.
          </p>
        )}
      </div>
      <div className="card">
        <h2>Plans</h2>
        <div className="table-wrap">
          <table>
            <caption className="sr-only">Plan catalogue with prices</caption>
            <thead>
              <tr>
                <th scope="col">Plan</th>
                <th scope="col">USD / month</th>
                <th scope="col">KES / month</th>
                <th scope="col">Connections</th>
                <th scope="col">Dispatches/s</th>
                <th scope="col" />
              </tr>
            </thead>
            <tbody>
              {plans.map((p) => (
                <tr key={p.id} aria-current={p.id === account.plan.id ? 'true' : undefined}>
                  <td>{p.name}</td>
                  <td>
                    {p.price.usd.toLocaleString('en-US', { style: 'currency', currency: 'USD' })}
                  </td>
                  <td>KES {p.price.kes.toLocaleString('en-KE')}</td>
                  {/* Free holds only the Test key: its limits, not the unused Live ones. */}
                  <td data-testid={`catalogue-connections-${p.id}`}>
                    {p.paid
                      ? p.limits.connections
                      : `${account.test_key_limits.connections} (Test key)`}
                  </td>
                  <td data-testid={`catalogue-rate-${p.id}`}>
                    {p.paid
                      ? p.limits.dispatch_rate
                      : `${account.test_key_limits.dispatch_rate} (Test key)`}
                  </td>
                  <td>
                    {payable(p) ? (
                      <button type="button" onClick={() => setPaying({ plan: p })}>
                        {p.id === account.plan.id ? `Renew ${p.name}` : `Pay for ${p.name}`}
                      </button>
                    ) : p.id === account.plan.id ? (
                      'current'
                    ) : p.paid && config?.checkout_url ? (
                      <a
                        className="button"
                        href={`${config.checkout_url}?plan=${encodeURIComponent(p.id)}`}
                      >
                        Pay for {p.name}
                      </a>
                    ) : p.paid ? (
                      <button
                        type="button"
                        disabled
                        title="Online payment is not available yet: contact support"
                      >
                        Pay
                      </button>
                    ) : null}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
        <p className="hint" data-testid="catalogue-free">
          Free holds only the Test key, so its figures are the Test key's limits (every account's
          Test key has them); a paid plan's figures are for its Live keys.
        </p>
      </div>
      <PastPayments payments={payments} />
      {paying && (
        <Checkout
          key={paying.plan.id}
          plan={paying.plan}
          {...(paying.resume ? { resume: paying.resume } : {})}
          live={live}
          onSettled={settled}
          onClose={() => setPaying(undefined)}
        />
      )}
    </section>
  );
}

function rate(l: Limits): string {
  return `${l.dispatch_rate}/s, burst ${l.dispatch_burst}`;
}

/** One limit for each kind of key the account can hold (no Live column on a free plan). */
function LimitRow({
  name,
  id,
  live,
  test,
}: {
  name: string;
  id: string;
  live: string | null;
  test: string;
}) {
  return (
    <tr>
      <th scope="row">{name}</th>
      {live !== null && <td data-testid={`limit-live-${id}`}>{live}</td>}
      <td data-testid={`limit-test-${id}`}>{test}</td>
    </tr>
  );
}

/** The renewal reminder (GET /v1/billing/subscription): shown from `remind_from` on. */
function RenewalNotice({ sub, planName }: { sub: Subscription | undefined; planName: string }) {
  const r = sub?.renewal;
  if (!r?.period_end || !(r.reminder_due || r.lapsed)) return null;
  return (
    <p role="status" className="card notice" data-testid="renewal">
      {r.lapsed
        ? `Your ${planName} plan lapsed on ${when(r.period_end)}: Live keys are refused until you renew it below.`
        : `Your ${planName} plan ends on ${when(r.period_end)}: renew it below to keep your Live keys working.`}
    </p>
  );
}
