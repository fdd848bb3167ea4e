import { randomUUID } from 'node:crypto';
import { dashboardRecipient, subjects, type VerifiedKey } from '@herald/proto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ACCOUNT_A, ACCOUNT_B, answerFor, KEYS, key } from './support/auth-responder.js';
import {
  type IngressFixture,
  newRecipient,
  notifyBody,
  startIngressFixture,
} from './support/fixture.js';
import { request } from './support/http.js';

/**
 * The dashboard's credentials at ingress: never `POST /notify` (single or batch); auth's sender
 * dispatches over NATS only to its account's dashboard recipient; customer keys never reach that
 * recipient. No edge is connected, so an accepted dispatch is queued (202).
 */
let fx: IngressFixture;
beforeAll(async () => {
  fx = await startIngressFixture();
});
afterAll(async () => {
  await fx?.stop();
});

const RESERVED_A = dashboardRecipient(ACCOUNT_A);

function dashboardKey(role: 'listen' | 'send', account = ACCOUNT_A): string {
  const apiKey = `hk_dash_${randomUUID().replaceAll('-', '')}`;
  const verified: VerifiedKey = key(`dash-${randomUUID()}`, {
    account_id: account,
    kind: 'dashboard',
    client: 'mobile',
    expires_at: Date.now() + 3600_000,
    dashboard: { role, recipient: dashboardRecipient(account) },
  });
  answerFor(apiKey, verified);
  return apiKey;
}

async function natsDispatch(account: string, body: unknown) {
  const msg = await fx.peer.request(subjects.dispatch(account), JSON.stringify(body), {
    timeout: 5000,
  });
  return JSON.parse(new TextDecoder().decode(msg.data));
}

describe('a dashboard credential', () => {
  it('is refused on POST /notify and /notify/batch with 403 dashboard_key_scope, whatever the recipient', async () => {
    for (const role of ['listen', 'send'] as const) {
      const apiKey = dashboardKey(role);
      for (const recipient of [RESERVED_A, newRecipient()]) {
        const res = await request(fx.baseUrl, { body: notifyBody(recipient, { api_key: apiKey }) });
        expect(res.status).toBe(403);
        expect(res.json.error).toMatchObject({ code: 'dashboard_key_scope' });
      }
      const batch = await request(fx.baseUrl, {
        path: '/notify/batch',
        body: {
          api_key: apiKey,
          client: 'mobile',
          events: [{ recipient: RESERVED_A, payload: 1 }],
        },
      });
      expect(batch.status).toBe(403);
      expect(batch.json.error).toMatchObject({ code: 'dashboard_key_scope' });
    }
  });

  it("as auth's sender, dispatches over NATS to its account's dashboard recipient, and nowhere else", async () => {
    const sender = dashboardKey('send');
    const ok = await natsDispatch(ACCOUNT_A, notifyBody(RESERVED_A, { api_key: sender }));
    expect(ok).toMatchObject({ http_status: 202, status: 'User offline, notification saved' });
    const elsewhere = await natsDispatch(
      ACCOUNT_A,
      notifyBody(newRecipient(), { api_key: sender }),
    );
    expect(elsewhere).toMatchObject({ http_status: 403, error: { code: 'dashboard_key_scope' } });
    // Another account's subject: the account check refuses it before anything else.
    const crossed = await natsDispatch(
      ACCOUNT_B,
      notifyBody(dashboardRecipient(ACCOUNT_B), { api_key: sender }),
    );
    expect(crossed).toMatchObject({ http_status: 403, error: { code: 'account_mismatch' } });
  });

  it('as a listener, cannot dispatch even over NATS', async () => {
    const listener = dashboardKey('listen');
    const res = await natsDispatch(ACCOUNT_A, notifyBody(RESERVED_A, { api_key: listener }));
    expect(res).toMatchObject({ http_status: 403, error: { code: 'dashboard_key_scope' } });
  });
});

describe("a customer's key and the dashboard recipient", () => {
  it("may not send to its own account's dashboard recipient (403 reserved_recipient), over HTTP or NATS", async () => {
    const res = await request(fx.baseUrl, { body: notifyBody(RESERVED_A) });
    expect(res.status).toBe(403);
    expect(res.json.error).toMatchObject({ code: 'reserved_recipient', field: 'recipient' });
    const nats = await natsDispatch(ACCOUNT_A, notifyBody(RESERVED_A));
    expect(nats).toMatchObject({ http_status: 403, error: { code: 'reserved_recipient' } });
  });

  it('gets a per-event refusal for it in a batch, and the other events go through', async () => {
    const res = await request(fx.baseUrl, {
      path: '/notify/batch',
      body: {
        api_key: KEYS.mobile,
        client: 'mobile',
        events: [
          { recipient: RESERVED_A, payload: 1 },
          { recipient: newRecipient(), payload: 2 },
        ],
      },
    });
    expect(res.status).toBe(200);
    expect(res.json.results[0]).toMatchObject({ error: { code: 'reserved_recipient' } });
    expect(res.json.results[1]).toMatchObject({ status: 'User offline, notification saved' });
  });

  it("may send to another account's dashboard recipient id: it is only an id in its own account", async () => {
    const res = await request(fx.baseUrl, { body: notifyBody(dashboardRecipient(ACCOUNT_B)) });
    expect(res.status).toBe(202);
  });
});
