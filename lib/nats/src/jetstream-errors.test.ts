import { describe, expect, it } from 'vitest';
import {
  isConsumerNotFound,
  isNotFound,
  isRecipientFull,
  isStoreFull,
  isStreamNotFound,
  isWrongLastSequence,
  JsErrCode,
  jsErrCode,
} from './jetstream-errors.js';

/** An API error as nats.js raises it: the server's api_error on a NatsError. */
const apiError = (code: number, err_code: number, description = '') =>
  Object.assign(new Error(description), {
    code: String(code),
    api_error: { code, err_code, description },
  });

describe('JetStream error predicates', () => {
  it('read the err_code off a nats.js error, and nothing off anything else', () => {
    expect(jsErrCode(apiError(404, 10014))).toBe(10014);
    expect(jsErrCode(new Error('plain'))).toBeUndefined();
    expect(jsErrCode(undefined)).toBeUndefined();
    expect(isConsumerNotFound(apiError(404, JsErrCode.ConsumerNotFound))).toBe(true);
    expect(isConsumerNotFound(apiError(404, JsErrCode.StreamNotFound))).toBe(false);
    expect(isStreamNotFound(apiError(404, JsErrCode.StreamNotFound))).toBe(true);
    expect(isWrongLastSequence(apiError(400, JsErrCode.WrongLastSequence))).toBe(true);
  });

  it('treat every JetStream 404 as not found, from an error or a reply body', () => {
    expect(isNotFound(apiError(404, JsErrCode.NoMessageFound))).toBe(true);
    expect(isNotFound({ api_error: { code: 404 } })).toBe(true);
    expect(isNotFound(apiError(503, JsErrCode.StreamStoreFailed))).toBe(false);
    expect(isNotFound(undefined)).toBe(false);
  });

  it('tell a full recipient from a full store, although both are err_code 10077', () => {
    const perSubject = {
      err_code: 10077,
      description: 'maximum messages per subject exceeded',
    };
    expect(isRecipientFull(perSubject)).toBe(true);
    expect(isStoreFull(perSubject)).toBe(false);
    for (const description of ['maximum bytes exceeded', 'maximum messages exceeded']) {
      expect(isStoreFull({ err_code: 10077, description })).toBe(true);
      expect(isRecipientFull({ err_code: 10077, description })).toBe(false);
    }
    expect(isStoreFull({ err_code: 10023, description: 'insufficient resources' })).toBe(true);
    expect(isStoreFull({ err_code: 10077, description: 'write failed' })).toBe(false);
    expect(isStoreFull(undefined)).toBe(false);
  });
});
