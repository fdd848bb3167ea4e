import { type FormEvent, useCallback, useEffect, useRef, useState } from 'react';
import { ApiError, api, errorText, type Plan } from './api.js';
import {
  isSettled,
  type Payment,
  type PaymentStatus,
  PHONE_FORMS,
  POLL_MS,
  paymentText,
  phoneHint,
} from './billing.js';
import { when } from './KeysPage.js';
import { PAYMENT_STATE } from './PastPayments.js';
import type { BillingLive } from './useBillingListener.js';

interface HistoryLine {
  at: string;
  action: string;
  status: string | null;
}

/**
 * The payment's steps as its payer knows them: each change of state once, in words (the
 * provider's callbacks and queries are Herald's business, not the payer's).
 */
function payerSteps(history: HistoryLine[], phone: string): Array<{ at: string; text: string }> {
  const steps: Array<{ at: string; text: string }> = [];
  let last: string | null = null;
  for (const h of history) {
    const state = h.status as PaymentStatus | null;
    if (!state || state === last || !(state in PAYMENT_STATE)) continue;
    last = state;
    steps.push({
      at: h.at,
      text: state === 'pending' ? `prompt sent to ${phone}` : PAYMENT_STATE[state],
    });
  }
  return steps;
}

/**
 * Paying for one plan by M-Pesa: the phone form, then the payment followed until it settles.
 * `resume` is a payment already pending when the page opened (a reload mid-payment). `live` is the
 * page's Herald socket (useBillingListener): each notice of this payment re-reads it; only while
 * that socket is down does the page poll.
 */
export function Checkout({
  plan,
  resume,
  live,
  onSettled,
  onClose,
}: {
  plan: Plan;
  resume?: Payment;
  live: BillingLive;
  onSettled: (p: Payment) => void;
  onClose: () => void;
}) {
  const [phone, setPhone] = useState('');
  const [touched, setTouched] = useState(false);
  const [error, setError] = useState('');
  // The server's refusal of the number, named by its field: shown instead of the hint, not twice.
  const [phoneError, setPhoneError] = useState('');
  const [busy, setBusy] = useState(false);
  const [payment, setPayment] = useState<Payment | undefined>(resume);
  const [history, setHistory] = useState<HistoryLine[]>([]);

  const paymentId = payment?.id;
  const pending = payment?.status === 'pending';
  // A ref, so a parent re-render (a new onSettled) neither re-reads nor restarts the poll.
  const onSettledRef = useRef(onSettled);
  onSettledRef.current = onSettled;
  /** Reads the payment once; true when it is still pending. */
  const read = useCallback(async (id: string, stopped: () => boolean): Promise<boolean> => {
    try {
      const p = await api<Payment & { history: HistoryLine[] }>(
        'GET',
        `/v1/billing/payments/${id}`,
      );
      if (stopped()) return false;
      setError('');
      setHistory(p.history);
      setPayment(p);
      if (isSettled(p.status)) {
        onSettledRef.current(p);
        return false;
      }
    } catch (err) {
      if (!stopped()) setError(`Could not read the payment (retrying): ${errorText(err)}`);
    }
    return true;
  }, []);

  // Live: each notice of this payment on the page's Herald socket triggers one read (the notice
  // names the step; the read brings the receipt and history it leaves out).
  const notice = paymentId ? live.payments[paymentId] : undefined;
  useEffect(() => {
    if (!paymentId || !notice) return;
    let stopped = false;
    void read(paymentId, () => stopped);
    return () => {
      stopped = true;
    };
  }, [paymentId, notice, read]);

  // The fallback: while the socket is not connected, re-read the payment every POLL_MS until it
  // settles (docs/architecture-history.md, "Dashboard checkout"). A chain of timeouts, so reads
  // never overlap.
  const polling = Boolean(paymentId) && pending && !live.connected;
  useEffect(() => {
    if (!polling || !paymentId) return;
    let stopped = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const loop = async () => {
      if (await read(paymentId, () => stopped)) timer = setTimeout(loop, POLL_MS);
    };
    void loop();
    return () => {
      stopped = true;
      clearTimeout(timer);
    };
  }, [polling, paymentId, read]);

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setError('');
    setPhoneError('');
    setHistory([]);
    setBusy(true);
    try {
      setPayment(await api<Payment>('POST', '/v1/billing/checkout', { plan: plan.id, phone }));
    } catch (err) {
      // The server names the field at fault: a bad number is said once, under the number.
      if (err instanceof ApiError && err.field === 'phone') setPhoneError(err.message);
      else
        setError(
          err instanceof ApiError && err.field ? `${err.field}: ${err.message}` : errorText(err),
        );
    } finally {
      setBusy(false);
    }
  };

  const hint = touched ? phoneHint(phone) : undefined;
  return (
    <section className="card" aria-labelledby="checkout-title">
      <h2 id="checkout-title">
        Pay for {plan.name}: KES {plan.price.kes.toLocaleString('en-KE')} / month by M-Pesa
      </h2>
      {!payment || (isSettled(payment.status) && payment.status !== 'succeeded') ? (
        <form onSubmit={submit} className="inline">
          <label>
            M-Pesa phone number
            <input
              value={phone}
              inputMode="tel"
              autoComplete="tel"
              placeholder="0712 345 678"
              aria-describedby="phone-hint"
              onChange={(e) => {
                setPhone(e.target.value);
                setPhoneError('');
              }}
              onBlur={() => setTouched(true)}
              required
            />
          </label>
          <button type="submit" disabled={busy}>
            {payment ? 'Try again' : 'Send the M-Pesa prompt'}
          </button>{' '}
          <button type="button" className="secondary" onClick={onClose}>
            Close
          </button>
          {phoneError ? (
            <p id="phone-hint" role="alert" className="error" data-testid="phone-error">
              {phoneError}
            </p>
          ) : (
            <p id="phone-hint" className="hint">
              {hint ?? `Accepted forms: ${PHONE_FORMS}. You confirm the payment on that phone.`}
            </p>
          )}
        </form>
      ) : null}
      {error && (
        <p role="alert" className="error">
          {error}
        </p>
      )}
      {payment && (
        <div>
          {pending && (
            <p
              className="hint"
              data-testid="live-updates"
              data-via={live.connected ? 'herald' : 'polling'}
            >
              {live.connected
                ? 'Following this payment live over Herald.'
                : `Checking this payment every ${POLL_MS / 1000} s (live updates are not connected).`}
            </p>
          )}
          <p
            role="status"
            data-testid="payment-status"
            data-status={payment.status}
            className={payment.status === 'succeeded' ? 'ok' : undefined}
          >
            {paymentText(payment, plan.name)}
            {payment.status === 'succeeded' && payment.period_end && (
              <> Paid until {when(payment.period_end)}.</>
            )}
          </p>
          {payment.status === 'succeeded' && (
            <p>
              <a href="#keys">Create a Live key on the Keys page</a>
            </p>
          )}
          <dl className="facts">
            <dt>Payment</dt>
            <dd>
              <code>{payment.id}</code> to {payment.phone}
            </dd>
            {payment.receipt && (
              <>
                <dt>M-Pesa receipt</dt>
                <dd>{payment.receipt}</dd>
              </>
            )}
          </dl>
          {history.length > 0 && (
            <ol className="history" aria-label="Payment history">
              {payerSteps(history, payment.phone).map((h) => (
                <li key={`${h.at}-${h.text}`}>
                  {when(h.at)}: {h.text}
                </li>
              ))}
            </ol>
          )}
        </div>
      )}
    </section>
  );
}
