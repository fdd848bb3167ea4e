export {
  DARAJA_PRODUCTION_URL,
  DARAJA_SANDBOX_URL,
  DarajaClient,
  type DarajaClientOptions,
  DarajaPaths,
  type StkQueryAnswer,
} from './mpesa/client.js';
export { darajaTimestamp, stkPassword } from './mpesa/password.js';
export { MpesaProvider } from './mpesa/provider.js';
export { mapResultCode, ResultCodes } from './mpesa/result-codes.js';
export {
  BEING_PROCESSED_CODE,
  CALLBACK_ACK,
  CallbackItem,
  callbackItem,
  StkCallback,
  TransactionType,
} from './mpesa/schemas.js';
export { TokenCache } from './mpesa/token-cache.js';
export {
  isNormalisedPhone,
  maskPhone,
  normalisePhone,
  PHONE_HINT,
  type PhoneResult,
} from './phone.js';
export {
  CallbackError,
  type CallbackResult,
  type Initiated,
  type InitiateRequest,
  PAYMENT_OUTCOMES,
  type PaymentOutcome,
  type PaymentProvider,
  type PaymentStatus,
  ProviderError,
  type ProviderResult,
} from './provider.js';
