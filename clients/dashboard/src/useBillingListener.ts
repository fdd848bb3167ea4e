import { Herald } from '@herald/sdk';
import { useEffect, useState } from 'react';
import { api } from './api.js';
import type { PaymentStatus } from './billing.js';

/** A payment step as auth dispatches it (proto PaymentNotice): no phone, no receipt. */
export interface PaymentNotice {
  type: 'payment';
  payment_id: string;
  plan: string;
  status: PaymentStatus;
  reason: string | null;
  period_end: string | null;
  at: number;
}

export interface RenewalNotice {
  type: 'renewal_reminder';
  plan: string;
  period_end: string;
  at: number;
}

export type BillingNotice = PaymentNotice | RenewalNotice;

/** POST /v1/dashboard/listener. */
export interface Listener {
  api_key: string;
  recipient: string;
  client: 'web';
  ws_url: string;
  expires_at: string;
}

/** What the Plan page knows of its own Herald socket. */
export interface BillingLive {
  /** True while the socket is open and accepted: the page then does not poll. */
  connected: boolean;
  /** The newest notice of each payment seen on the socket, by payment id. */
  payments: Record<string, PaymentNotice>;
  /** Bumped on each renewal reminder, so the page re-reads the subscription. */
  reminders: number;
}

/** After a refusal or a failed mint, wait this long before asking for a new credential, ms. */
export const RELISTEN_MS = 5000;

/** What startBillingListener needs: a credential source, and where to say what happened. */
export interface BillingListenerDeps {
  /** A fresh dashboard credential (POST /v1/dashboard/listener); throws when none is to be had. */
  mint: () => Promise<Listener>;
  onConnected: (connected: boolean) => void;
  onNotice: (notice: BillingNotice) => void;
}

/**
 * Keeps one socket to the account's dashboard recipient, renewing its credential before expiry;
 * returns stop(). At most two sockets exist: the current one and, during a renewal, the pending
 * one, which replaces the current only once accepted. A refused pending socket is closed and the
 * current kept (it is still valid); every socket counts against DASHBOARD_MAX_CONNECTIONS until
 * closed, so none is ever dropped without closing it.
 */
export function startBillingListener({
  mint,
  onConnected,
  onNotice,
}: BillingListenerDeps): () => void {
  let stopped = false;
  /** The socket `connected` reports on. */
  let current: Herald | undefined;
  /** A renewal's socket, not yet accepted. */
  let pending: Herald | undefined;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const again = (ms: number) => {
    clearTimeout(timer);
    timer = setTimeout(() => void listen(), ms);
  };
  const listen = async () => {
    let listener: Listener;
    try {
      listener = await mint();
    } catch {
      // Live updates off (no DASHBOARD_WS_URL) or auth unreachable: poll, try again later.
      if (!stopped) again(RELISTEN_MS * 6);
      return;
    }
    if (stopped) return;
    // A renewal still not accepted (edge unreachable) gives way to this one.
    pending?.disconnect();
    pending = undefined;
    const h = new Herald({ apiKey: listener.api_key, client: 'web', wsUrl: listener.ws_url });
    if (current) pending = h;
    else current = h;
    const sub = h.subscribe<BillingNotice>(listener.recipient);
    sub.onConnectionChange((state) => {
      if (h === pending && state === 'connected') {
        // The new socket is in: the old credential's goes.
        current?.disconnect();
        current = h;
        pending = undefined;
      }
      if (h === current) onConnected(state === 'connected');
    });
    sub.onError((err) => {
      // Refused (expired, logged out, cap): the SDK stops; get a new credential.
      if (err.kind !== 'refused' || (h !== current && h !== pending)) return;
      h.disconnect();
      if (h === pending) {
        pending = undefined;
      } else {
        onConnected(false);
        current = pending;
        pending = undefined;
        // A renewal under way takes over, on its own renewal timer.
        if (current) return;
      }
      again(RELISTEN_MS);
    });
    sub.listen((notice) => {
      if (notice) onNotice(notice);
    });
    // Renew at 80% of the credential's life, so the socket never reaches its expiry.
    const life = Date.parse(listener.expires_at) - Date.now();
    again(Math.max(RELISTEN_MS, life * 0.8));
  };
  void listen();
  return () => {
    stopped = true;
    clearTimeout(timer);
    current?.disconnect();
    pending?.disconnect();
    current = pending = undefined;
  };
}

/**
 * The dashboard listening to its own account over Herald: asks auth for a dashboard credential
 * (POST /v1/dashboard/listener), opens an @herald/sdk socket to the account's dashboard recipient
 * and collects the billing notices auth dispatches there (docs/architecture-history.md, "Dashboard
 * checkout"). The credential is renewed before it expires; a refused socket (expired, logged out)
 * or an unreachable edge leaves `connected` false, which is when the page polls instead.
 */
export function useBillingListener(): BillingLive {
  const [live, setLive] = useState<BillingLive>({ connected: false, payments: {}, reminders: 0 });
  useEffect(
    () =>
      startBillingListener({
        mint: () => api<Listener>('POST', '/v1/dashboard/listener'),
        onConnected: (connected) =>
          setLive((l) => (l.connected === connected ? l : { ...l, connected })),
        onNotice: (notice) => {
          if (notice.type === 'payment') {
            setLive((l) => ({ ...l, payments: { ...l.payments, [notice.payment_id]: notice } }));
          } else if (notice.type === 'renewal_reminder') {
            setLive((l) => ({ ...l, reminders: l.reminders + 1 }));
          }
        },
      }),
    [],
  );
  return live;
}
