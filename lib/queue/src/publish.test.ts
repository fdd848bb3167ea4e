import { describe, expect, it } from 'vitest';
import { classifyPublishError } from './publish.js';

/** A publish error as nats.js raises it: the server's api_error on a NatsError. */
const jsError = (code: number, err_code: number, description: string) =>
  Object.assign(new Error(description), {
    code: String(code),
    api_error: { code, err_code, description },
  });

// The api_error bodies below are what nats-server 2.9.10 answered when each limit was hit
// (measured with discard new on a file stream); the integration tests hit two of them for real.
describe('classifyPublishError', () => {
  it('tells the per-recipient cap from a full stream, although both are err_code 10077', () => {
    expect(
      classifyPublishError(jsError(503, 10077, 'maximum messages per subject exceeded')),
    ).toEqual({
      kind: 'recipient_full',
    });
    expect(classifyPublishError(jsError(503, 10077, 'maximum bytes exceeded'))).toEqual({
      kind: 'store_full',
      description: 'maximum bytes exceeded',
    });
    expect(classifyPublishError(jsError(503, 10077, 'maximum messages exceeded'))).toEqual({
      kind: 'store_full',
      description: 'maximum messages exceeded',
    });
  });

  it('treats exhausted server storage as a full store', () => {
    expect(classifyPublishError(jsError(503, 10023, 'insufficient resources')).kind).toBe(
      'store_full',
    );
  });

  it('treats any other store failure, no responders or a timeout as unavailable', () => {
    expect(
      classifyPublishError(jsError(503, 10077, 'write failed: no space left on device')).kind,
    ).toBe('error');
    expect(
      classifyPublishError(jsError(400, 10054, 'message size exceeds maximum allowed')).kind,
    ).toBe('error');
    expect(classifyPublishError(Object.assign(new Error('503'), { code: '503' })).kind).toBe(
      'error',
    );
    expect(
      classifyPublishError(Object.assign(new Error('TIMEOUT'), { code: 'TIMEOUT' })).kind,
    ).toBe('error');
  });
});
