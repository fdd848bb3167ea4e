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

  it('takes an optional device id of 1 to 64 characters of [A-Za-z0-9_-]', () => {
    const base = `api_key=${k}&client=web&recipient=${recipient}`;
    const id = `aZ09_-${'x'.repeat(58)}`;
    expect(parseConnectParams(new URLSearchParams(`${base}&device=${id}`)).device).toBe(id);
    expect(parseConnectParams(new URLSearchParams(`${base}&device=a`)).device).toBe('a');
    expect(parseConnectParams(new URLSearchParams(base)).device).toBeUndefined();
    for (const bad of ['', 'x'.repeat(65), 'a.b', 'a%20b', 'caf%C3%A9', 'a/b']) {
      const err = failure(`${base}&device=${bad}`);
      expect(err).toMatchObject({ code: 'invalid_field', field: 'device', status: 400 });
      expect(err.message).toContain('1 to 64 characters');
    }
    expect(failure(`${base}&device=a&device=b`)).toMatchObject({ field: 'device' });
  });
  it('takes batch=1 on connect, and names the field for anything else', () => {
    expect(
      parseConnectParams(
        new URLSearchParams(`api_key=${k}&client=web&recipient=${recipient}&batch=1`),
      ).batch,
    ).toBe('1');
    expect(
      parseConnectParams(new URLSearchParams(`api_key=${k}&client=web&recipient=${recipient}`))
        .batch,
    ).toBeUndefined();
    expect(failure(`api_key=${k}&client=web&recipient=${recipient}&batch=yes`)).toMatchObject({
      code: 'invalid_field',
      field: 'batch',
    });
    expect(failure(`api_key=${k}&client=web&recipient=${recipient}&batch=1&batch=1`)).toMatchObject(
      { field: 'batch', status: 400 },
    );
  });
});
