import { randomBytes, randomUUID } from 'node:crypto';
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { darajaTimestamp, stkPassword } from '../mpesa/password.js';
import { BEING_PROCESSED_CODE, StkPushRequest, StkQueryRequest } from '../mpesa/schemas.js';
import { callbackBody, randomInt, receiptNumber } from './daraja-wire.js';
import {
  type DarajaSimulator,
  type NextPush,
  SANDBOX_PASSKEY,
  SANDBOX_SHORTCODE,
  SIM_CONSUMER_KEY,
  SIM_CONSUMER_SECRET,
  type SimPush,
  type SimulatorOptions,
} from './simulator-types.js';
import { describeCode, resultForPhone } from './test-phones.js';

/**
 * A local stand-in for Daraja's M-Pesa Express: the same paths, bodies, result codes and error
 * answers (including the query's "being processed"), so Herald's client runs unchanged against
 * it. Binds 127.0.0.1 on `port` (0 picks one).
 */
export async function startDarajaSimulator(
  opts: SimulatorOptions = {},
  listen: { port?: number; host?: string; tls?: { cert: string; key: string } } = {},
): Promise<DarajaSimulator> {
  const cfg = {
    consumerKey: opts.consumerKey ?? SIM_CONSUMER_KEY,
    consumerSecret: opts.consumerSecret ?? SIM_CONSUMER_SECRET,
    shortcode: opts.shortcode ?? SANDBOX_SHORTCODE,
    passkey: opts.passkey ?? SANDBOX_PASSKEY,
    tokenTtlS: opts.tokenTtlS ?? 3599,
    resultDelayMs: opts.resultDelayMs === undefined ? 3000 : opts.resultDelayMs,
    lateCallbackMs: opts.lateCallbackMs ?? 10_000,
  };
  const tokens = new Map<string, number>();
  let issued = 0;
  const pushes: SimPush[] = [];
  const byId = new Map<string, SimPush>();
  const queued: NextPush[] = [];
  const timers = new Set<NodeJS.Timeout>();
  const inFlight = new Set<Promise<void>>();

  const later = (ms: number, fn: () => void) => {
    const t = setTimeout(() => {
      timers.delete(t);
      fn();
    }, ms);
    timers.add(t);
  };

  function track(p: Promise<void>): Promise<void> {
    inFlight.add(p);
    return p.finally(() => inFlight.delete(p));
  }

  async function deliver(push: SimPush): Promise<void> {
    const body = JSON.stringify(callbackBody(push));
    const url = new URL(push.callbackUrl);
    const transport = url.protocol === 'https:' ? https : http;
    await new Promise<void>((resolve) => {
      const req = transport.request(
        url,
        {
          method: 'POST',
          headers: { 'Content-Type': 'application/json' },
          ...(opts.ca ? { ca: opts.ca } : {}),
          timeout: 15_000,
        },
        (res) => {
          res.resume();
          res.on('end', () => {
            push.deliveries.push({ status: res.statusCode ?? 0 });
            resolve();
          });
        },
      );
      req.on('timeout', () => req.destroy(new Error('callback timed out')));
      req.on('error', (err) => {
        push.deliveries.push({ error: err.message });
        resolve();
      });
      req.end(body);
    });
  }

  async function settle(id: string): Promise<void> {
    const push = byId.get(id);
    if (!push) throw new Error(`no push ${id}`);
    if (push.settled) return;
    push.settled = true;
    if (push.resultCode === '0') push.receipt = receiptNumber();
    switch (push.callbackMode) {
      case 'missing':
        return;
      case 'late':
        later(cfg.lateCallbackMs, () => void track(deliver(push)));
        return;
      case 'duplicate':
        await track(deliver(push));
        await track(deliver(push));
        return;
      case 'once':
        await track(deliver(push));
    }
  }

  function authorised(req: http.IncomingMessage): boolean {
    const token = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1];
    const expires = token === undefined ? undefined : tokens.get(token);
    return expires !== undefined && Date.now() < expires;
  }

  function checkPassword(body: { Password: string; Timestamp: string; BusinessShortCode: string }) {
    return (
      body.BusinessShortCode === cfg.shortcode &&
      body.Password === stkPassword(cfg.shortcode, cfg.passkey, body.Timestamp)
    );
  }

  async function handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://sim');
    const send = (status: number, body: unknown) => {
      res.writeHead(status, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    const error = (status: number, errorCode: string, errorMessage: string) =>
      send(status, { requestId: randomUUID(), errorCode, errorMessage });

    if (req.method === 'GET' && url.pathname === '/oauth/v1/generate') {
      const basic = Buffer.from(`${cfg.consumerKey}:${cfg.consumerSecret}`).toString('base64');
      if (url.searchParams.get('grant_type') !== 'client_credentials') {
        return error(400, '400.008.02', 'Invalid grant type passed');
      }
      if (req.headers.authorization !== `Basic ${basic}`) {
        return error(400, '400.008.01', 'Invalid Authentication passed');
      }
      const token = randomBytes(20).toString('base64url');
      tokens.set(token, Date.now() + cfg.tokenTtlS * 1000);
      issued++;
      return send(200, { access_token: token, expires_in: String(cfg.tokenTtlS) });
    }

    if (req.method === 'POST' && url.pathname === '/mpesa/stkpush/v1/processrequest') {
      if (!authorised(req)) return error(401, '404.001.03', 'Invalid Access Token');
      const parsed = StkPushRequest.safeParse(await readJson(req));
      if (!parsed.success) {
        const field = String(parsed.error.issues[0]?.path[0] ?? 'body');
        return error(400, '400.002.02', `Bad Request - Invalid ${field}`);
      }
      if (!checkPassword(parsed.data)) {
        return error(400, '400.002.02', 'Bad Request - Invalid Password');
      }
      const body = parsed.data;
      const next = queued.shift() ?? {};
      if (next.refuse) {
        return error(next.refuse.status, next.refuse.errorCode, next.refuse.errorMessage);
      }
      const own = resultForPhone(body.PhoneNumber);
      const code = next.resultCode ?? own.code;
      const push: SimPush = {
        merchantRequestId: `${randomInt(10000, 99999)}-${randomInt(1e6, 9e6)}-1`,
        checkoutRequestId: `ws_CO_${darajaTimestamp(new Date())}${randomInt(1e9, 9e9)}`,
        phone: body.PhoneNumber,
        amount: body.Amount,
        callbackUrl: body.CallBackURL,
        accountReference: body.AccountReference,
        callbackMode: next.callback ?? 'once',
        callbackAmount: next.callbackAmount ?? body.Amount,
        settled: false,
        resultCode: code,
        resultDesc: next.resultCode === undefined ? own.desc : describeCode(code),
        receipt: undefined,
        deliveries: [],
      };
      pushes.push(push);
      byId.set(push.checkoutRequestId, push);
      if (cfg.resultDelayMs !== null) {
        later(cfg.resultDelayMs, () => void track(settle(push.checkoutRequestId)));
      }
      return send(200, {
        MerchantRequestID: push.merchantRequestId,
        CheckoutRequestID: push.checkoutRequestId,
        ResponseCode: '0',
        ResponseDescription: 'Success. Request accepted for processing',
        CustomerMessage: 'Success. Request accepted for processing',
      });
    }

    if (req.method === 'POST' && url.pathname === '/mpesa/stkpushquery/v1/query') {
      if (!authorised(req)) return error(401, '404.001.03', 'Invalid Access Token');
      const parsed = StkQueryRequest.safeParse(await readJson(req));
      if (!parsed.success || !checkPassword(parsed.data)) {
        return error(400, '400.002.02', 'Bad Request - Invalid Password');
      }
      const push = byId.get(parsed.data.CheckoutRequestID);
      if (!push) return error(400, '400.002.02', 'Bad Request - Invalid CheckoutRequestID');
      if (!push.settled) {
        return error(500, BEING_PROCESSED_CODE, 'The transaction is being processed');
      }
      return send(200, {
        ResponseCode: '0',
        ResponseDescription: 'The service request has been accepted successsfully',
        MerchantRequestID: push.merchantRequestId,
        CheckoutRequestID: push.checkoutRequestId,
        ResultCode: push.resultCode,
        ResultDesc: push.resultDesc,
      });
    }

    // Control routes, for a developer driving the simulator by hand (scripts/dev.sh runs it).
    if (req.method === 'GET' && url.pathname === '/simulator/pushes') return send(200, pushes);
    if (req.method === 'POST' && url.pathname === '/simulator/next') {
      const body = (await readJson(req)) as NextPush | undefined;
      queued.push(body ?? {});
      return send(200, { queued: queued.length });
    }
    const settleMatch = /^\/simulator\/settle\/([^/]+)$/.exec(url.pathname);
    if (req.method === 'POST' && settleMatch?.[1]) {
      const id = decodeURIComponent(settleMatch[1]);
      if (!byId.has(id)) return error(404, '404.000.00', `no push ${id}`);
      await settle(id);
      return send(200, byId.get(id));
    }
    return error(404, '404.000.00', `No such Daraja path: ${req.method} ${url.pathname}`);
  }

  const onRequest = (req: http.IncomingMessage, res: http.ServerResponse) => {
    handle(req, res).catch((err: unknown) => {
      res.writeHead(500, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify({ errorCode: '500.000.00', errorMessage: String(err) }));
    });
  };
  // HTTPS where it runs beside other containers (docker compose's dev profile); plain HTTP on
  // loopback for `make dev` and the tests.
  const server = listen.tls
    ? https.createServer({ cert: listen.tls.cert, key: listen.tls.key }, onRequest)
    : http.createServer(onRequest);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(listen.port ?? 0, listen.host ?? '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  const host = listen.host && listen.host !== '0.0.0.0' ? listen.host : '127.0.0.1';

  return {
    url: `${listen.tls ? 'https' : 'http'}://${host}:${port}`,
    pushes,
    tokenRequests: () => issued,
    nextPush: (next) => {
      queued.push(next);
    },
    push: (id) => byId.get(id),
    settle: (id) => track(settle(id)),
    sendCallback: (id) => {
      const push = byId.get(id);
      if (!push) return Promise.reject(new Error(`no push ${id}`));
      return track(deliver(push));
    },
    revokeTokens: () => tokens.clear(),
    async close() {
      for (const t of timers) clearTimeout(t);
      timers.clear();
      await Promise.allSettled([...inFlight]);
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
  };
}

async function readJson(req: http.IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > 64 * 1024) return undefined;
    chunks.push(chunk as Buffer);
  }
  try {
    return JSON.parse(Buffer.concat(chunks).toString('utf8'));
  } catch {
    return undefined;
  }
}
