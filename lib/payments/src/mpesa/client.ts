import type { z } from 'zod';
import { ProviderError } from '../provider.js';
import { darajaTimestamp, stkPassword } from './password.js';
import {
  BEING_PROCESSED_CODE,
  DarajaError,
  StkPushRequest,
  StkPushResponse,
  StkQueryRequest,
  StkQueryResponse,
  TokenResponse,
  type TransactionType,
} from './schemas.js';
import { TokenCache } from './token-cache.js';

/** Daraja's hosts; the simulator (simulator/) serves the same paths locally. */
export const DARAJA_SANDBOX_URL = 'https://sandbox.safaricom.co.ke';
export const DARAJA_PRODUCTION_URL = 'https://api.safaricom.co.ke';

export const DarajaPaths = {
  token: '/oauth/v1/generate',
  stkPush: '/mpesa/stkpush/v1/processrequest',
  stkQuery: '/mpesa/stkpushquery/v1/query',
} as const;

export interface DarajaClientOptions {
  /** Daraja's base URL: sandbox, production, or the local simulator. */
  baseUrl: string;
  consumerKey: string;
  consumerSecret: string;
  /** The paybill or till (BusinessShortCode) the passkey belongs to. */
  shortcode: string;
  passkey: string;
  /** Who receives the money (PartyB). Default: the shortcode. */
  partyB?: string;
  /** Default CustomerPayBillOnline; CustomerBuyGoodsOnline for a till. */
  transactionType?: TransactionType;
  /** Most time one HTTP call may take, ms. Default 15000. */
  timeoutMs?: number;
  /** How long before its expiry a token is replaced, ms. Default 60000. */
  tokenMarginMs?: number;
  /** Injectable for tests. */
  now?: () => number;
}

/** What Daraja says about a push now. */
export type StkQueryAnswer =
  | { kind: 'processing'; detail: string }
  | { kind: 'result'; resultCode: string; resultDesc: string };

/**
 * A small Daraja client: OAuth (cached), STK push and STK query. Written here rather than taken
 * from npm: the packages there hard-code Daraja's hosts (no local simulator) and are unmaintained
 * (see README.md).
 */
export class DarajaClient {
  readonly #opts: Required<Omit<DarajaClientOptions, 'now'>> & { now: () => number };
  readonly #tokens: TokenCache;

  constructor(opts: DarajaClientOptions) {
    this.#opts = {
      partyB: opts.shortcode,
      transactionType: 'CustomerPayBillOnline',
      timeoutMs: 15_000,
      tokenMarginMs: 60_000,
      now: Date.now,
      ...opts,
      baseUrl: opts.baseUrl.replace(/\/+$/, ''),
    };
    this.#tokens = new TokenCache(() => this.#fetchToken(), {
      marginMs: this.#opts.tokenMarginMs,
      now: this.#opts.now,
    });
  }

  /** Sends the prompt. Throws ProviderError. */
  async stkPush(req: {
    amount: number;
    phone: string;
    accountReference: string;
    transactionDesc: string;
    callbackUrl: string;
  }): Promise<StkPushResponse> {
    const timestamp = darajaTimestamp(new Date(this.#opts.now()));
    const body = checked(
      StkPushRequest,
      {
        BusinessShortCode: this.#opts.shortcode,
        Password: stkPassword(this.#opts.shortcode, this.#opts.passkey, timestamp),
        Timestamp: timestamp,
        TransactionType: this.#opts.transactionType,
        Amount: req.amount,
        PartyA: req.phone,
        PartyB: this.#opts.partyB,
        PhoneNumber: req.phone,
        CallBackURL: req.callbackUrl,
        AccountReference: req.accountReference.slice(0, 12),
        TransactionDesc: req.transactionDesc.slice(0, 13),
      },
      'STK push',
    );
    const res = await this.#post(DarajaPaths.stkPush, body);
    if (res.status !== 200) throw refused('STK push', res);
    const parsed = StkPushResponse.safeParse(res.json);
    if (!parsed.success) {
      throw new ProviderError('Daraja answered the STK push with an unexpected body', {
        retryable: false,
      });
    }
    if (parsed.data.ResponseCode !== '0') {
      throw new ProviderError(
        `Daraja did not accept the STK push (ResponseCode ${parsed.data.ResponseCode}: ${parsed.data.ResponseDescription ?? 'no description'})`,
        { retryable: false },
      );
    }
    return parsed.data;
  }

  /** Asks how a push stands. "Being processed" is an answer, not an error. Throws ProviderError. */
  async stkQuery(checkoutRequestId: string): Promise<StkQueryAnswer> {
    const timestamp = darajaTimestamp(new Date(this.#opts.now()));
    const body = checked(
      StkQueryRequest,
      {
        BusinessShortCode: this.#opts.shortcode,
        Password: stkPassword(this.#opts.shortcode, this.#opts.passkey, timestamp),
        Timestamp: timestamp,
        CheckoutRequestID: checkoutRequestId,
      },
      'STK query',
    );
    const res = await this.#post(DarajaPaths.stkQuery, body);
    if (res.status !== 200) {
      const err = DarajaError.safeParse(res.json);
      if (err.success && err.data.errorCode === BEING_PROCESSED_CODE) {
        return { kind: 'processing', detail: err.data.errorMessage };
      }
      throw refused('STK query', res);
    }
    const parsed = StkQueryResponse.safeParse(res.json);
    if (!parsed.success) {
      throw new ProviderError('Daraja answered the STK query with an unexpected body', {
        retryable: true,
      });
    }
    return {
      kind: 'result',
      resultCode: parsed.data.ResultCode,
      resultDesc: parsed.data.ResultDesc ?? '',
    };
  }

  async #fetchToken(): Promise<{ token: string; expiresInMs: number }> {
    const basic = Buffer.from(
      `${this.#opts.consumerKey}:${this.#opts.consumerSecret}`,
      'utf8',
    ).toString('base64');
    const res = await this.#send(`${DarajaPaths.token}?grant_type=client_credentials`, {
      method: 'GET',
      headers: { Authorization: `Basic ${basic}` },
    });
    if (res.status !== 200) throw refused('OAuth token request', res);
    const parsed = TokenResponse.safeParse(res.json);
    if (!parsed.success) {
      throw new ProviderError('Daraja answered the token request with an unexpected body', {
        retryable: true,
      });
    }
    return { token: parsed.data.access_token, expiresInMs: parsed.data.expires_in * 1000 };
  }

  /** POSTs with a bearer token; a 401 (token revoked early) gets one retry with a fresh token. */
  async #post(path: string, body: unknown): Promise<HttpAnswer> {
    for (let attempt = 0; ; attempt++) {
      const token = await this.#tokens.get();
      const res = await this.#send(path, {
        method: 'POST',
        headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
        body: JSON.stringify(body),
      });
      if (res.status !== 401 || attempt > 0) return res;
      this.#tokens.clear();
    }
  }

  async #send(path: string, init: RequestInit): Promise<HttpAnswer> {
    let res: Response;
    try {
      res = await fetch(`${this.#opts.baseUrl}${path}`, {
        ...init,
        signal: AbortSignal.timeout(this.#opts.timeoutMs),
      });
    } catch (err) {
      throw new ProviderError(
        `Daraja could not be reached at ${this.#opts.baseUrl} (${err instanceof Error ? err.message : String(err)})`,
        { retryable: true, cause: err },
      );
    }
    const text = await res.text();
    let json: unknown;
    try {
      json = text === '' ? undefined : JSON.parse(text);
    } catch {
      json = undefined;
    }
    return { status: res.status, json };
  }
}

interface HttpAnswer {
  status: number;
  json: unknown;
}

/** A request Daraja would refuse is refused here, naming the field (never retried). */
function checked<S extends z.ZodType>(schema: S, value: unknown, what: string): z.infer<S> {
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  throw new ProviderError(
    `the ${what} request is invalid: ${issue?.path.join('.') || 'body'} ${issue?.message ?? ''}`.trim(),
    { retryable: false },
  );
}

function refused(what: string, res: HttpAnswer): ProviderError {
  const err = DarajaError.safeParse(res.json);
  const detail = err.success ? `${err.data.errorCode}: ${err.data.errorMessage}` : 'no error body';
  return new ProviderError(`Daraja refused the ${what} (HTTP ${res.status}, ${detail})`, {
    retryable: res.status >= 500 || res.status === 429,
  });
}
