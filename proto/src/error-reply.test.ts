import { describe, expect, it } from 'vitest';
import { AuthVerifyReply } from './auth.js';
import { ErrorReply, errorOfReply, errorReply } from './error-reply.js';
import { HeraldError } from './errors.js';
import { StatusReply, StatusTrimReply } from './status.js';

describe('the NATS error reply envelope', () => {
  it('carries the code, the message and the field, and rebuilds the typed error', () => {
    const err = new HeraldError('invalid_field', 'ids must be an array', { field: 'ids' });
    const reply = errorReply(err);
    expect(reply).toEqual({
      v: 1,
      ok: false,
      error: { code: 'invalid_field', message: 'ids must be an array', field: 'ids' },
    });
    const rebuilt = errorOfReply(ErrorReply.parse(JSON.parse(JSON.stringify(reply))));
    expect(rebuilt).toBeInstanceOf(HeraldError);
    expect([rebuilt.code, rebuilt.status, rebuilt.message, rebuilt.field]).toEqual([
      'invalid_field',
      400,
      'ids must be an array',
      'ids',
    ]);
  });

  it('is the error form of every internal reply', () => {
    const reply = errorReply(new HeraldError('unavailable', 'retry shortly'));
    for (const schema of [AuthVerifyReply, StatusReply, StatusTrimReply]) {
      expect(schema.parse(reply)).toEqual(reply);
    }
  });

  it('refuses a code the catalogue does not hold', () => {
    const reply = { v: 1, ok: false, error: { code: 'nope', message: 'x' } };
    expect(ErrorReply.safeParse(reply).success).toBe(false);
  });
});
