/**
 * Daraja's M-Pesa Express messages, as zod schemas (value and type share a name). Daraja sends
 * numbers as strings in some places and as numbers in others, so codes accept both.
 */
import { z } from 'zod';

const Code = z.union([z.string(), z.number()]).transform(String);

/** `GET /oauth/v1/generate?grant_type=client_credentials`. `expires_in` is seconds, as text. */
export const TokenResponse = z.object({
  access_token: z.string().min(1),
  expires_in: z.union([z.string(), z.number()]).transform(Number).pipe(z.number().positive()),
});
export type TokenResponse = z.infer<typeof TokenResponse>;

export const TransactionType = z.enum(['CustomerPayBillOnline', 'CustomerBuyGoodsOnline']);
export type TransactionType = z.infer<typeof TransactionType>;

/** `POST /mpesa/stkpush/v1/processrequest` body. */
export const StkPushRequest = z.object({
  BusinessShortCode: z.string().regex(/^\d{5,7}$/),
  Password: z.string().min(1),
  Timestamp: z.string().regex(/^\d{14}$/),
  TransactionType,
  Amount: z.number().int().positive(),
  PartyA: z.string().regex(/^2547\d{8}$/),
  PartyB: z.string().regex(/^\d{5,7}$/),
  PhoneNumber: z.string().regex(/^2547\d{8}$/),
  CallBackURL: z.string().url().startsWith('https://'),
  AccountReference: z.string().min(1).max(12),
  TransactionDesc: z.string().min(1).max(13),
});
export type StkPushRequest = z.infer<typeof StkPushRequest>;

export const StkPushResponse = z.object({
  MerchantRequestID: z.string().min(1),
  CheckoutRequestID: z.string().min(1),
  ResponseCode: Code,
  ResponseDescription: z.string().optional(),
  CustomerMessage: z.string().optional(),
});
export type StkPushResponse = z.infer<typeof StkPushResponse>;

/** `POST /mpesa/stkpushquery/v1/query` body. */
export const StkQueryRequest = z.object({
  BusinessShortCode: z.string().regex(/^\d{5,7}$/),
  Password: z.string().min(1),
  Timestamp: z.string().regex(/^\d{14}$/),
  CheckoutRequestID: z.string().min(1),
});
export type StkQueryRequest = z.infer<typeof StkQueryRequest>;

export const StkQueryResponse = z.object({
  ResponseCode: Code,
  ResponseDescription: z.string().optional(),
  MerchantRequestID: z.string().optional(),
  CheckoutRequestID: z.string().optional(),
  ResultCode: Code,
  ResultDesc: z.string().optional(),
});
export type StkQueryResponse = z.infer<typeof StkQueryResponse>;

/** The error body Daraja answers with a 4xx/5xx. */
export const DarajaError = z.object({
  requestId: z.string().optional(),
  errorCode: z.string(),
  errorMessage: z.string(),
});
export type DarajaError = z.infer<typeof DarajaError>;

/**
 * The query's answer while the customer has not answered the prompt yet (HTTP 500). It means
 * "ask again later", not failure.
 */
export const BEING_PROCESSED_CODE = '500.001.1001';

/** One `CallbackMetadata.Item`; Daraja omits `Value` on some (e.g. Balance). */
export const CallbackItem = z.object({
  Name: z.string(),
  Value: z.union([z.string(), z.number()]).optional(),
});
export type CallbackItem = z.infer<typeof CallbackItem>;

/** What Daraja posts to `CallBackURL`. */
export const StkCallback = z.object({
  Body: z.object({
    stkCallback: z.object({
      MerchantRequestID: z.string(),
      CheckoutRequestID: z.string().min(1),
      ResultCode: Code,
      ResultDesc: z.string().optional(),
      CallbackMetadata: z.object({ Item: z.array(CallbackItem) }).optional(),
    }),
  }),
});
export type StkCallback = z.infer<typeof StkCallback>;

/** The answer Daraja expects from a callback URL. */
export const CALLBACK_ACK = { ResultCode: 0, ResultDesc: 'Accepted' } as const;

/** An item's value by name (items come in no fixed order, and may lack a value). */
export function callbackItem(
  items: readonly CallbackItem[] | undefined,
  name: string,
): string | number | undefined {
  return items?.find((i) => i.Name === name)?.Value;
}
