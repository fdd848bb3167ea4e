/**
 * Measures how long a billing notice takes from auth's decision (the notice's `at`) to the
 * dashboard's socket (frame received), over the whole stack: auth → rt.dispatch → ingress → edge →
 * a herald.v1 socket opened with the dashboard credential. Not a test (no assertions): the figure
 * in docs/architecture-history.md ("Dashboard checkout") comes from it. One machine, so one clock.
 *
 *   node --conditions=herald-source --import tsx test/e2e/measure/dashboard-notice-latency.ts
 */
import { randomUUID } from 'node:crypto';
import {
  SANDBOX_PASSKEY,
  SANDBOX_SHORTCODE,
  SIM_CONSUMER_KEY,
  SIM_CONSUMER_SECRET,
  startDarajaSimulator,
} from '@herald/payments/simulator';
import { freePort, openSocket, request, type StackOptions, startStack } from '@herald/testkit';

const PAYMENTS = Number(process.env.PAYMENTS ?? 30);

const sim = await startDarajaSimulator({ resultDelayMs: null });
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
const stack = await startStack(opts);
opts.env.auth.DASHBOARD_WS_URL = stack.wsUrl;
await stack.restart('auth');
const auth = `https://127.0.0.1:${stack.ports.auth}`;
try {
  const email = `measure-${randomUUID()}@test.herald`;
  const password = randomUUID();
  await request('POST', `${auth}/v1/accounts`, stack.ca, { email, password });
  const login = await request('POST', `${auth}/v1/sessions`, stack.ca, { email, password });
  const headers = {
    cookie: String(login.headers['set-cookie'] ?? '').split(';')[0] ?? '',
    'x-herald-csrf': login.body.csrf as string,
  };
  const l = await request('POST', `${auth}/v1/dashboard/listener`, stack.ca, undefined, headers);
  const socket = openSocket(stack.wsUrl, stack.ca, {
    apiKey: l.body.api_key,
    recipient: l.body.recipient,
    client: 'web',
    v1: true,
  });
  await socket.opened;
  const arrivals: number[] = [];
  socket.ws.on('message', () => arrivals.push(Date.now()));
  const toSocket: number[] = [];
  const toIngress: number[] = [];
  for (let i = 0; i < PAYMENTS; i++) {
    const before = socket.frames.length;
    const res = await request(
      'POST',
      `${auth}/v1/billing/checkout`,
      stack.ca,
      { plan: 'hobby', phone: '0708374149' },
      headers,
    );
    await sim.settle(res.body.provider_ref);
    // Two notices per payment: pending, then succeeded.
    await socket.waitForFrames(before + 2, 30_000);
    for (let f = before; f < before + 2; f++) {
      const env = socket.frames[f]?.envelope;
      if (!env) throw new Error(`frame ${f} is not a herald.v1 envelope`);
      const { at } = env.payload as { at: number };
      toSocket.push((arrivals[f] ?? Number.NaN) - at);
      toIngress.push(env.ts - at);
    }
  }
  const q = (xs: number[], p: number) => {
    const s = [...xs].sort((a, b) => a - b);
    return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
  };
  const line = (name: string, xs: number[]) =>
    `${name}: n=${xs.length} p50=${q(xs, 50)} ms p95=${q(xs, 95)} ms max=${Math.max(...xs)} ms`;
  console.log(line('notice.at -> ingress accepted (envelope ts)', toIngress));
  console.log(line('notice.at -> frame on the dashboard socket', toSocket));
  await socket.close();
} finally {
  await stack.stop();
  await sim.close();
}
