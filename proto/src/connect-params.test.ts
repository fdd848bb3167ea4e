import { describe, expect, it } from 'vitest';
import { HeraldError } from './errors.js';
import { parseConnectParams } from './socket.js';

const recipient = '3b241101-e2bb-4255-8caf-4136c566a962';
const k = 'hk_test_0123456789abcdefABCDEF';

function failure(query: string): HeraldError {
  try {
    parseConnectParams(new URLSearchParams(query));
  } catch (err) {
    if (err instanceof HeraldError) return err;
    throw err;
  }
  throw new Error('expected a HeraldError');
}

describe('parseConnectParams', () => {
  it('returns the parameters with the recipient in lower case', () => {
    expect(
      parseConnectParams(
        new URLSearchParams(`api_key=${k}&client=web&recipient=${recipient.toUpperCase()}`),
      ),
    ).toEqual({
      api_key: k,
      client: 'web',
      recipient,
    });
  });

  it('names the missing or bad parameter, in a fixed order', () => {
    expect(failure('')).toMatchObject({ code: 'missing_field', field: 'recipient', status: 400 });
    expect(failure(`recipient=${recipient}`)).toMatchObject({
      code: 'missing_api_key',
      field: 'api_key',
      status: 401,
    });
    expect(failure(`recipient=${recipient}&api_key=k`)).toMatchObject({
      code: 'missing_field',
      field: 'client',
    });
    expect(failure(`recipient=x&api_key=${k}&client=tv`)).toMatchObject({
      code: 'invalid_recipient',
      field: 'recipient',
    });
    expect(failure(`recipient=${recipient}&api_key=${k}&client=tv`)).toMatchObject({
      code: 'invalid_client',
      field: 'client',
    });
    // Version nibble 1: a UUID, but not v4.
    expect(
      failure(`recipient=3b241101-e2bb-1255-8caf-4136c566a962&api_key=${k}&client=web`).code,
    ).toBe('invalid_recipient');
  });
});
