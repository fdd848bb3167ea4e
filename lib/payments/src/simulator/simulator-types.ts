/** Daraja's public sandbox shortcode and passkey: what the simulator accepts by default. */
export const SANDBOX_SHORTCODE = '174379';
export const SANDBOX_PASSKEY = 'bfb279f9aa9bdbcf158e97dd71a467cd2e0c893059b10f78e6b72ada1ed2c919';
export const SIM_CONSUMER_KEY = 'herald-sim-key';
export const SIM_CONSUMER_SECRET = 'herald-sim-secret';

/**
 * How the callback of a push is delivered: once (normal), never (`missing`: only a query can
 * resolve it), after the query already answers (`late`), or twice (`duplicate`).
 */
export type CallbackMode = 'once' | 'missing' | 'late' | 'duplicate';

export interface SimulatorOptions {
  consumerKey?: string;
  consumerSecret?: string;
  shortcode?: string;
  passkey?: string;
  /** Lifetime of an issued token, s. Default 3599, as Daraja. */
  tokenTtlS?: number;
  /**
   * How long the customer takes to answer the prompt, ms. Default 3000. `null`: never on their
   * own; call {@link DarajaSimulator.settle} (what tests do, so nothing depends on timing).
   */
  resultDelayMs?: number | null;
  /** How long after the result a `late` callback comes, ms. Default 10000. */
  lateCallbackMs?: number;
  /** PEM of a CA to trust for https callbacks (a local Herald's self-signed certificate). */
  ca?: string;
}

/** Overrides for the next push (tests and the /simulator/next control route). */
export interface NextPush {
  callback?: CallbackMode;
  /** A result code instead of the phone's own. */
  resultCode?: string;
  /** The amount the callback reports instead of the one charged (a tampered callback). */
  callbackAmount?: number;
  /** Refuse the push itself with this Daraja error (HTTP status, errorCode, errorMessage). */
  refuse?: { status: number; errorCode: string; errorMessage: string };
}

export interface SimPush {
  merchantRequestId: string;
  checkoutRequestId: string;
  phone: string;
  amount: number;
  callbackUrl: string;
  accountReference: string;
  callbackMode: CallbackMode;
  callbackAmount: number;
  /** Settled once the customer has answered: the query then reports the result. */
  settled: boolean;
  resultCode: string;
  resultDesc: string;
  receipt: string | undefined;
  /** One entry per callback delivery attempt: the HTTP status, or the error. */
  deliveries: { status?: number; error?: string }[];
}

export interface DarajaSimulator {
  /** Base URL to give the Daraja client: http://127.0.0.1:port. */
  url: string;
  pushes: readonly SimPush[];
  /** How many tokens were issued (to see the client's cache at work). */
  tokenRequests(): number;
  nextPush(next: NextPush): void;
  /** The push with this CheckoutRequestID. */
  push(checkoutRequestId: string): SimPush | undefined;
  /** The customer answers now: the result is fixed and the callback sent as its mode says. */
  settle(checkoutRequestId: string): Promise<void>;
  /** Posts the push's callback (again) now, whatever its mode. */
  sendCallback(checkoutRequestId: string): Promise<void>;
  /** Forgets issued tokens, as when Daraja revokes them early. */
  revokeTokens(): void;
  close(): Promise<void>;
}
