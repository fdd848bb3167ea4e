import { HeraldError } from '@herald/proto';
import { describe, expect, it } from 'vitest';
import { accept } from '../accept.js';
import { copyIdOf } from './copy-id.js';
import { acceptTopic } from './topic-accept.js';

const limits = { payloadLimitBytes: 64 };
const R = '7b0e3c1a-2f4d-4a8b-9c6e-1d2f3a4b5c6d';

function topicBody(body: Record<string, unknown>) {
  const bytes = new TextEncoder().encode(JSON.stringify(body));
  const scanned = accept({ body: bytes }, limits);
  if (!('topicMembers' in scanned)) throw new Error('not a topic body');
  return acceptTopic(bytes, scanned.topicMembers, limits);
}

function refusal(body: Record<string, unknown>): { code: string; field?: string | undefined } {
  try {
    topicBody(body);
  } catch (err) {
    if (err instanceof HeraldError) return { code: err.code, field: err.field };
    throw err;
  }
  throw new Error('accepted');
}

const ok = { topic: 'project:1', payload: { a: 1 }, api_key: 'hk_test_x', client: 'mobile' };

describe('acceptTopic', () => {
  it('takes a topic body, its payload as bytes and exclude lower-cased', () => {
    const t = topicBody({ ...ok, exclude: [R.toUpperCase(), R] });
    expect(t).toMatchObject({ topic: 'project:1', client: 'mobile', exclude: [R] });
    expect(new TextDecoder().decode(t.payload)).toBe('{"a":1}');
  });

  it('names the field at fault', () => {
    expect(refusal({ ...ok, recipient: R })).toEqual({ code: 'invalid_field', field: 'topic' });
    expect(refusal({ ...ok, topic: 'a b' })).toEqual({ code: 'invalid_field', field: 'topic' });
    expect(refusal({ ...ok, topic: 'x'.repeat(129) }).field).toBe('topic');
    expect(refusal({ ...ok, payload: undefined })).toEqual({
      code: 'missing_field',
      field: 'payload',
    });
    expect(refusal({ ...ok, client: 'tv' }).field).toBe('client');
    expect(refusal({ ...ok, exclude: [R, 'nope'] })).toEqual({
      code: 'invalid_field',
      field: 'exclude.1',
    });
    expect(refusal({ ...ok, exclude: 'nope' }).field).toBe('exclude');
    expect(refusal({ ...ok, payload: 'x'.repeat(100) }).field).toBe('payload');
  });
});

describe('copyIdOf', () => {
  it('derives the same UUID (version 5) for the same event and recipient, another for another', () => {
    const id = copyIdOf('e1', R);
    expect(id).toBe(copyIdOf('e1', R));
    expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(copyIdOf('e2', R)).not.toBe(id);
    expect(copyIdOf('e1', '0b0b0b0b-0000-4000-8000-00000000000b')).not.toBe(id);
  });
});
