import { describe, expect, it } from 'vitest';
import { isWellFormedApiKey } from './api-key.js';
import { HeraldError } from './errors.js';
import { parseNotifyRequest } from './notify.js';
import { parseConnectParams } from './socket.js';

const recipient = '3b241101-e2bb-4255-8caf-4136c566a962';
const body = (api_key: unknown) => ({ recipient, payload: { a: 1 }, api_key, client: 'mobile' });

function thrown(fn: () => unknown): HeraldError {
  try {
    fn();
  } catch (err) {
    if (err instanceof HeraldError) return err;
    throw err;
  }
  throw new Error('expected a HeraldError');
}

const INVALID = { code: 'invalid_api_key', status: 401, field: 'api_key' };

describe('api_key of the wrong type or shape', () => {
  it.each([
    ['a number', 42],
    ['an array', ['hk_live_abc']],
    ['null', null],
    ['an empty string', ''],
    ['an object', { key: 'hk_live_abc' }],
    ['a string without a key prefix', 'not-a-key'],
    ['a prefix with nothing after it', 'hk_live_'],
    ['a key with a space', 'hk_live_abc def'],
    ['a key far too long', `hk_live_${'a'.repeat(129)}`],
  ])('is 401 invalid_api_key in a notify body when it is %s', (_name, value) => {
    expect(thrown(() => parseNotifyRequest(body(value)))).toMatchObject(INVALID);
  });

  it('is the same 401 on /ws/connect when empty, repeated or malformed', () => {
    const q = (s: string) => () => parseConnectParams(new URLSearchParams(s));
    const base = `recipient=${recipient}&client=web`;
    expect(thrown(q(`${base}&api_key=`))).toMatchObject(INVALID);
    expect(thrown(q(`${base}&api_key=hk_live_a&api_key=hk_live_b`))).toMatchObject(INVALID);
    expect(thrown(q(`${base}&api_key=42`))).toMatchObject(INVALID);
    expect(thrown(q(`${base}&api_key=null`))).toMatchObject(INVALID);
  });

  it('leaves a missing api_key as 401 missing_api_key', () => {
    const { api_key: _omitted, ...rest } = body('x');
    expect(thrown(() => parseNotifyRequest(rest))).toMatchObject({ code: 'missing_api_key' });
    expect(
      thrown(() => parseConnectParams(new URLSearchParams(`recipient=${recipient}&client=web`))),
    ).toMatchObject({ code: 'missing_api_key', status: 401 });
  });

  it('accepts issued keys and refuses nothing that has their shape', () => {
    const issued = `hk_live_${'Ab9'.repeat(14)}x`;
    expect(isWellFormedApiKey(issued)).toBe(true);
    expect(isWellFormedApiKey(`hk_test_${'0'.repeat(43)}`)).toBe(true);
    // The dashboard's own credential reaches auth too (it refuses it where it does not belong).
    expect(isWellFormedApiKey(`hk_dash_${'0'.repeat(43)}`)).toBe(true);
    expect(isWellFormedApiKey(`hk_other_${'0'.repeat(43)}`)).toBe(false);
    expect(parseNotifyRequest(body(issued)).api_key).toBe(issued);
    expect(isWellFormedApiKey('HK_LIVE_abc')).toBe(false);
    expect(isWellFormedApiKey(7)).toBe(false);
  });
});
