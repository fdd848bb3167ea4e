import {
  CallbackError,
  type CallbackResult,
  type Initiated,
  type InitiateRequest,
  type PaymentProvider,
  type ProviderResult,
} from '../provider.js';
import { DarajaClient, type DarajaClientOptions } from './client.js';
import { mapResultCode } from './result-codes.js';
import { type CallbackItem, callbackItem, StkCallback } from './schemas.js';

/** M-Pesa Express (STK push) through Daraja. */
export class MpesaProvider implements PaymentProvider {
  readonly name = 'mpesa';
  readonly currency = 'KES';
  readonly client: DarajaClient;

  constructor(opts: DarajaClientOptions) {
    this.client = new DarajaClient(opts);
  }

  async initiate(request: InitiateRequest): Promise<Initiated> {
    const res = await this.client.stkPush({
      amount: request.amount,
      phone: request.phone,
      accountReference: request.reference,
      transactionDesc: request.description,
      callbackUrl: request.callbackUrl,
    });
    return {
      status: 'pending',
      providerRef: res.CheckoutRequestID,
      merchantRef: res.MerchantRequestID,
    };
  }

  async query(providerRef: string): Promise<ProviderResult> {
    const answer = await this.client.stkQuery(providerRef);
    if (answer.kind === 'processing') return { status: 'pending', detail: answer.detail };
    return toResult(answer.resultCode, answer.resultDesc);
  }

  verifyCallback(body: unknown): CallbackResult {
    const parsed = StkCallback.safeParse(body);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      throw new CallbackError(
        `not an STK callback: ${issue?.path.join('.') || 'body'} ${issue?.message ?? 'is invalid'}`,
      );
    }
    const cb = parsed.data.Body.stkCallback;
    const result = toResult(cb.ResultCode, cb.ResultDesc);
    if (result.status !== 'succeeded') return { providerRef: cb.CheckoutRequestID, result };
    const items: CallbackItem[] = cb.CallbackMetadata?.Item ?? [];
    const amount = Number(callbackItem(items, 'Amount'));
    const phone = callbackItem(items, 'PhoneNumber');
    const receipt = callbackItem(items, 'MpesaReceiptNumber');
    return {
      providerRef: cb.CheckoutRequestID,
      result,
      amount: Number.isFinite(amount) ? amount : undefined,
      phone: phone === undefined ? undefined : String(phone),
      receipt: receipt === undefined ? undefined : String(receipt),
    };
  }

  failureReason(code: string, description?: string): string {
    return mapResultCode(code, description).reason ?? 'The payment went through';
  }
}

function toResult(
  code: string,
  description: string | undefined,
): Exclude<ProviderResult, { status: 'pending' }> {
  const { outcome, reason } = mapResultCode(code, description);
  return reason === undefined ? { status: outcome, code } : { status: outcome, code, reason };
}
