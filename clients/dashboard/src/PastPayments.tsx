import type { Payment, PaymentStatus } from './billing.js';
import { when } from './KeysPage.js';

/** A payment's state as its payer knows it (never the provider's internal steps). */
export const PAYMENT_STATE: Record<PaymentStatus, string> = {
  pending: 'waiting for the phone',
  succeeded: 'paid',
  cancelled: 'cancelled on the phone',
  timed_out: 'not answered in time',
  failed: 'refused by M-Pesa',
};

/** The account's payments, newest first, with their receipts: they stay once a checkout closes. */
export function PastPayments({ payments }: { payments: Payment[] }) {
  if (payments.length === 0) return null;
  return (
    <div className="card">
      <h2>Payments</h2>
      <div className="table-wrap">
        <table className="stack-narrow" data-testid="past-payments">
          <caption className="sr-only">Past payments and receipts</caption>
          <thead>
            <tr>
              <th scope="col">Date</th>
              <th scope="col">Plan</th>
              <th scope="col">Amount</th>
              <th scope="col">State</th>
              <th scope="col">M-Pesa receipt</th>
            </tr>
          </thead>
          <tbody>
            {payments.map((p) => (
              <tr key={p.id} data-testid="past-payment">
                <td data-label="Date" className="nowrap">
                  {when(p.settled_at ?? p.created_at)}
                </td>
                <td data-label="Plan">{p.plan}</td>
                <td data-label="Amount" className="nowrap">
                  {p.amount.currency} {p.amount.major.toLocaleString('en-KE')}
                </td>
                <td data-label="State">{PAYMENT_STATE[p.status]}</td>
                <td data-label="M-Pesa receipt">{p.receipt ?? '—'}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </div>
  );
}
