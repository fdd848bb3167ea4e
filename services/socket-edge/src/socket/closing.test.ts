import { HeraldError } from '@herald/proto';
import { describe, expect, it } from 'vitest';
import { closeReason } from './closing.js';

describe('closeReason', () => {
  it('is the code alone for a refusal without Retry-After (as before: wire-compatible)', () => {
    expect(closeReason(new HeraldError('connection_limit', 'full'))).toBe(
      '{"code":"connection_limit"}',
    );
  });

  it('carries retry_after in whole seconds when the refusal has one, within 123 bytes', () => {
    const err = new HeraldError('too_many_connects', 'slow down', { retryAfter: 1 });
    expect(closeReason(err)).toBe('{"code":"too_many_connects","retry_after":1}');
    // The longest code with a day's wait still fits a close frame's reason.
    const long = new HeraldError('token_recipient_mismatch', 'x', { retryAfter: 86_400 });
    expect(Buffer.byteLength(closeReason(long))).toBeLessThanOrEqual(123);
  });
});
