/**
 * Every JetStream API error Herald branches on, in one place (the shape of nats.js's own
 * `JetStreamApiCodes`): the `err_code` of a failed API call or publish, measured on 2.9.10, and
 * small predicates that read it off whatever nats.js raised or a reply carried.
 */
export const JsErrCode = {
  /** No consumer by that name on the stream. */
  ConsumerNotFound: 10014,
  /** The server's own JetStream storage is exhausted (description "insufficient resources"). */
  InsufficientResources: 10023,
  /** STREAM.MSG.GET found no stored message matching the request. */
  NoMessageFound: 10037,
  /** STREAM.MSG.DELETE of a sequence that is not (or no longer) stored. */
  DeleteNotFound: 10057,
  /** STREAM.CREATE lost a race: another instance created the stream first. */
  StreamNameInUse: 10058,
  StreamNotFound: 10059,
  /** A KV update whose expected revision is no longer the last one (an optimistic write lost). */
  WrongLastSequence: 10071,
  /**
   * "Store failed": a discard-new limit refused a publish. The same code for the per-subject
   * cap, `max_bytes` and `max_msgs`; only the description tells them apart.
   */
  StreamStoreFailed: 10077,
} as const;

/** The descriptions that tell one 10077 refusal from another. */
export const JsErrDescription = {
  /** The per-recipient cap (discard new per subject). */
  MaxMsgsPerSubject: 'maximum messages per subject exceeded',
  /** The whole stream's `max_msgs` or `max_bytes`. */
  StreamLimit: /^maximum (messages|bytes) exceeded$/,
} as const;

/** The body of a JetStream API error, as nats.js attaches it (`api_error`) or a reply carries it. */
export interface JsApiError {
  code?: number;
  err_code?: number;
  description?: string;
}

/** The `api_error` of a nats.js error, or undefined for any other value. */
export function jsApiError(err: unknown): JsApiError | undefined {
  return (err as { api_error?: JsApiError } | undefined)?.api_error;
}

/** The JetStream `err_code` of a nats.js error, or undefined. */
export function jsErrCode(err: unknown): number | undefined {
  return jsApiError(err)?.err_code;
}

export const isConsumerNotFound = (err: unknown) => jsErrCode(err) === JsErrCode.ConsumerNotFound;
export const isStreamNotFound = (err: unknown) => jsErrCode(err) === JsErrCode.StreamNotFound;
export const isStreamNameInUse = (err: unknown) => jsErrCode(err) === JsErrCode.StreamNameInUse;
export const isNoMessageFound = (err: unknown) => jsErrCode(err) === JsErrCode.NoMessageFound;
export const isDeleteNotFound = (err: unknown) => jsErrCode(err) === JsErrCode.DeleteNotFound;
export const isWrongLastSequence = (err: unknown) => jsErrCode(err) === JsErrCode.WrongLastSequence;

/** True for JetStream's 404s: no such consumer, no such stream, no message on that subject. */
export function isNotFound(err: unknown): boolean {
  const e = err as { code?: string | number; api_error?: { code?: number } } | undefined;
  return e?.api_error?.code === 404 || e?.code === '404' || e?.code === 404;
}

/** A publish refused because the recipient already holds the per-recipient cap of events. */
export function isRecipientFull(apiError: JsApiError | undefined): boolean {
  return (
    apiError?.err_code === JsErrCode.StreamStoreFailed &&
    apiError.description === JsErrDescription.MaxMsgsPerSubject
  );
}

/** A publish refused because the whole stream or the server's JetStream storage is full. */
export function isStoreFull(apiError: JsApiError | undefined): boolean {
  return (
    (apiError?.err_code === JsErrCode.StreamStoreFailed &&
      JsErrDescription.StreamLimit.test(apiError.description ?? '')) ||
    apiError?.err_code === JsErrCode.InsufficientResources
  );
}
