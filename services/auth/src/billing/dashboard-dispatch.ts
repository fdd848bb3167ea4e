import type { Logger } from '@herald/kit';
import {
  type BillingNotice,
  DispatchReply,
  dashboardRecipient,
  type NotifyRequest,
  subjects,
} from '@herald/proto';
import type { Kysely } from 'kysely';
import { type NatsConnection, headers as natsHeaders } from 'nats';
import type { AuthDb } from '../db-schema.js';
import { mintDashboardKey } from '../keys/dashboard-keys.js';

export interface DashboardDispatchDeps {
  db: Kysely<AuthDb>;
  nc: NatsConnection;
  logger: Logger;
  /** DASHBOARD_KEY_TTL_MS: how long each sender credential lives. */
  ttlMs: number;
  /** DASHBOARD_NOTICE_TIMEOUT_MS: how long ingress may take to answer a dispatch. */
  timeoutMs: number;
  /** Epoch ms; injectable for tests. */
  now: () => number;
}

/** Where billing notices go besides core NATS: something that never throws at the caller. */
export interface NoticeForwarder {
  forward(notice: BillingNotice): void;
}

/**
 * Carries billing notices to the account's dashboard over Herald itself: a `rt.dispatch.<account>`
 * request (the same path as `POST /notify`, so ingress applies its checks, records statuses, and
 * queues the notice when no dashboard is connected) to the account's dashboard recipient. The key
 * in the body is a `send` dashboard credential auth mints for itself, per account, kept in memory
 * only (its hash in `dashboard_keys`) and re-minted when half its life is gone; ingress accepts it
 * only over NATS and only for that recipient. Failures are logged and dropped: the database is the
 * truth and the dashboard falls back to reading it.
 */
export class DashboardDispatch implements NoticeForwarder {
  readonly #deps: DashboardDispatchDeps;
  readonly #senders = new Map<string, { key: string; renewAt: number }>();
  readonly #inflight = new Set<Promise<void>>();

  constructor(deps: DashboardDispatchDeps) {
    this.#deps = deps;
  }

  forward(notice: BillingNotice): void {
    const sent: Promise<void> = this.send(notice)
      .then(() => undefined)
      .catch((err) =>
        this.#deps.logger.warn(
          { account: notice.account_id, type: notice.type, err: String(err) },
          'could not dispatch a billing notice to the dashboard',
        ),
      )
      .finally(() => this.#inflight.delete(sent));
    this.#inflight.add(sent);
  }

  /** Dispatches one notice and resolves with ingress's reply; rejects when it could not. */
  async send(notice: BillingNotice): Promise<DispatchReply> {
    const { nc, timeoutMs } = this.#deps;
    const account = notice.account_id;
    const body: NotifyRequest = {
      recipient: dashboardRecipient(account),
      payload: notice,
      api_key: await this.#sender(account),
      client: 'mobile',
    };
    const hdrs = natsHeaders();
    // A notice re-sent (a retried sweep) is delivered at most once.
    hdrs.set('Idempotency-Key', idempotencyKeyOf(notice));
    const msg = await nc.request(subjects.dispatch(account), JSON.stringify(body), {
      timeout: timeoutMs,
      headers: hdrs,
    });
    const reply = DispatchReply.parse(JSON.parse(new TextDecoder().decode(msg.data)));
    if (reply.http_status >= 300) {
      // A stale sender (deleted, expired early) is minted again on the next notice.
      if (reply.http_status === 401) this.#senders.delete(account);
      const code = 'error' in reply ? reply.error.code : undefined;
      throw new Error(`ingress answered ${reply.http_status}${code ? ` ${code}` : ''}`);
    }
    return reply;
  }

  /** Resolves once every notice in flight is answered or failed (for shutdown and tests). */
  async settled(): Promise<void> {
    await Promise.all([...this.#inflight]);
  }

  async #sender(account: string): Promise<string> {
    const now = this.#deps.now();
    const held = this.#senders.get(account);
    if (held && held.renewAt > now) return held.key;
    for (const [id, s] of this.#senders) if (s.renewAt <= now) this.#senders.delete(id);
    const minted = await mintDashboardKey(
      this.#deps.db,
      {
        accountId: account,
        role: 'send',
        domain: null,
        sessionId: null,
        expiresAt: new Date(now + this.#deps.ttlMs),
      },
      new Date(now),
    );
    this.#senders.set(account, { key: minted.key, renewAt: now + this.#deps.ttlMs / 2 });
    return minted.key;
  }
}

/** One notice, one key: a payment's step, or a reminder for one period end. */
function idempotencyKeyOf(notice: BillingNotice): string {
  return notice.type === 'payment'
    ? `billing:${notice.payment_id}:${notice.status}`
    : `renewal:${notice.account_id}:${notice.period_end}`;
}
