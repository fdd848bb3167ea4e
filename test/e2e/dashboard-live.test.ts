import { randomUUID } from 'node:crypto';
import {
  type DarajaSimulator,
  SANDBOX_PASSKEY,
  SANDBOX_SHORTCODE,
  SIM_CONSUMER_KEY,
  SIM_CONSUMER_SECRET,
  startDarajaSimulator,
  TEST_PHONES,
} from '@herald/payments/simulator';
import {
  freePort,
  openSocket,
  post,
  request,
  type Stack,
  type StackOptions,
  startStack,
  type TestSocket,
} from '@herald/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

// The whole stack and the Daraja simulator: the dashboard's own credential opens a real socket
// on the edge, and auth's payment notices reach it through ingress like any event, live or queued
// while no dashboard is connected; never another account's, and the credential cannot send.
let sim: DarajaSimulator;
let stack: Stack;
let auth: string;

beforeAll(async () => {
  sim = await startDarajaSimulator({ resultDelayMs: null });
  const opts = {
    env: {
      auth: {
        BILLING_PROVIDER: 'mpesa',
        BILLING_CALLBACK_URL: `https://localhost:${await freePort()}`,
        MPESA_BASE_URL: sim.url,
        MPESA_CONSUMER_KEY: SIM_CONSUMER_KEY,
        MPESA_CONSUMER_SECRET: SIM_CONSUMER_SECRET,
        MPESA_SHORTCODE: SANDBOX_SHORTCODE,
        MPESA_PASSKEY: SANDBOX_PASSKEY,
        PAYMENT_QUERY_INTERVAL_MS: '200',
        BILLING_SWEEP_INTERVAL_MS: '200',
      } as Record<string, string>,
    },
  } satisfies StackOptions;
  stack = await startStack(opts);
  // The listener's ws_url is the edge's, known once the stack has its ports.
  opts.env.auth.DASHBOARD_WS_URL = stack.wsUrl;
  await stack.restart('auth');
  auth = `https://127.0.0.1:${stack.ports.auth}`;
});

afterAll(async () => {
  await stack?.stop();
  await sim?.close();
});

async function until(check: () => boolean, what: string, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

interface Session {
  account: string;
  headers: Record<string, string>;
}

async function login(): Promise<Session> {
  const email = `live-${randomUUID()}@test.herald`;
  const password = randomUUID();
  const signup = await request('POST', `${auth}/v1/accounts`, stack.ca, { email, password });
  expect(signup.status).toBe(201);
  const res = await request('POST', `${auth}/v1/sessions`, stack.ca, { email, password });
  return {
    account: signup.body.id as string,
    headers: {
      cookie: String(res.headers['set-cookie'] ?? '').split(';')[0] ?? '',
      'x-herald-csrf': res.body.csrf as string,
    },
  };
}

async function listener(s: Session) {
  const res = await request(
    'POST',
    `${auth}/v1/dashboard/listener`,
    stack.ca,
    undefined,
    s.headers,
  );
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  expect(res.body.ws_url).toBe(stack.wsUrl);
  return res.body as { api_key: string; recipient: string; client: 'web' };
}

async function listen(l: { api_key: string; recipient: string }): Promise<TestSocket> {
  const socket = openSocket(stack.wsUrl, stack.ca, {
    apiKey: l.api_key,
    recipient: l.recipient,
    client: 'web',
    v1: true,
  });
  await socket.opened;
  return socket;
}

async function pay(s: Session, plan: string, phone: string) {
  const res = await request(
    'POST',
    `${auth}/v1/billing/checkout`,
    stack.ca,
    { plan, phone },
    s.headers,
  );
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  await sim.settle(res.body.provider_ref);
  return res.body.id as string;
}

type Notice = { type: string; account_id: string; payment_id: string; status: string };
const notices = (socket: TestSocket) => socket.events().map((e) => e.payload as Notice);
const stepsOf = (socket: TestSocket, payment: string) =>
  notices(socket)
    .filter((n) => n.payment_id === payment)
    .map((n) => n.status);

describe("the dashboard listening on its own account's events", () => {
  it('receives its payment notices live, and another account receives none of them', async () => {
    const a = await login();
    const b = await login();
    const [la, lb] = [await listener(a), await listener(b)];
    expect(la.recipient).not.toBe(lb.recipient);
    const [sa, sb] = [await listen(la), await listen(lb)];

    const payment = await pay(a, 'hobby', '0708374149');
    await until(() => stepsOf(sa, payment).includes('succeeded'), "A's success notice");
    expect(stepsOf(sa, payment)).toEqual(['pending', 'succeeded']);
    for (const n of notices(sa)) expect(n.account_id).toBe(a.account);
    // B's dashboard got nothing of A's (it has had time: A's notices already arrived).
    expect(notices(sb)).toEqual([]);
    await Promise.all([sa.close(), sb.close()]);
  });

  it('gets the notices dispatched while it was closed when it connects again (queued)', async () => {
    const a = await login();
    const l = await listener(a);
    const first = await listen(l);
    await first.close();
    const payment = await pay(a, 'hobby', `+${TEST_PHONES.cancelled}`);
    const paid = async () =>
      (
        await request(
          'GET',
          `${auth}/v1/billing/payments/${payment}`,
          stack.ca,
          undefined,
          a.headers,
        )
      ).body.status;
    const deadline = Date.now() + 30_000;
    while ((await paid()) === 'pending' && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(await paid()).toBe('cancelled');
    const again = await listen(l);
    await until(() => stepsOf(again, payment).includes('cancelled'), 'the queued notices');
    expect(stepsOf(again, payment)).toEqual(['pending', 'cancelled']);
    await again.close();
  });

  it('cannot send, cannot open another recipient, and ends with the login', async () => {
    const a = await login();
    const b = await login();
    const l = await listener(a);
    const lb = await listener(b);
    const sent = await post(stack.baseUrl, stack.ca, {
      recipient: l.recipient,
      payload: { forged: true },
      api_key: l.api_key,
      client: 'web',
    });
    expect(sent.status).toBe(403);
    expect(sent.body.error.code).toBe('dashboard_key_scope');

    const crossed = openSocket(stack.wsUrl, stack.ca, {
      apiKey: l.api_key,
      recipient: lb.recipient,
      client: 'web',
    });
    const refused = await crossed.ended;
    expect(refused.httpStatus).toBe(403);
    expect(JSON.parse(refused.httpBody ?? '{}').error.code).toBe('dashboard_key_scope');

    const socket = await listen(l);
    const out = await request(
      'DELETE',
      `${auth}/v1/sessions/current`,
      stack.ca,
      undefined,
      a.headers,
    );
    expect(out.status).toBe(204);
    const ended = await socket.ended;
    expect(ended.code).toBe(4401);
  });
});
