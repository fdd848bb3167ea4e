import { HeraldError, PUSHER_LIMITS } from '@herald/proto';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../config.js';
import { pusherLimitsOf } from './pusher-env.js';
import { type PusherRouteKind, parsePusherBody } from './pusher-request.js';

const LIMITS = pusherLimitsOf(loadConfig({ TLS_DISABLED: 'true' }));
const enc = (v: unknown) => new TextEncoder().encode(typeof v === 'string' ? v : JSON.stringify(v));
const parse = (kind: PusherRouteKind, body: unknown, userId?: string) =>
  parsePusherBody(kind, enc(body), LIMITS, userId);

function refusal(fn: () => unknown): HeraldError {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(HeraldError);
    return err as HeraldError;
  }
  throw new Error('expected a refusal');
}

const channels = (n: number) => Array.from({ length: n }, (_, i) => `ch-${i}`);
const event = (over: Record<string, unknown> = {}) => ({
  name: 'greet',
  data: '{"hi":1}',
  channels: ['news'],
  ...over,
});

describe('parsePusherBody: POST /apps/{id}/events', () => {
  it('reads name, data, channels (or channel) and socket_id', () => {
    expect(parse('events', event({ socket_id: '123.456' }))).toEqual({
      events: [{ name: 'greet', data: '{"hi":1}', channels: ['news'], socket_id: '123.456' }],
      batchInfo: false,
    });
    const one = parse('events', { name: 'n', data: 'x', channel: 'private-a' });
    expect(one.events[0]?.channels).toEqual(['private-a']);
  });

  it('takes exactly PUSHER_MAX_CHANNELS channels and refuses one more, naming channels', () => {
    expect(parse('events', event({ channels: channels(100) })).events[0]?.channels).toHaveLength(
      100,
    );
    const err = refusal(() => parse('events', event({ channels: channels(101) })));
    expect([err.status, err.field]).toEqual([400, 'channels']);
    expect(err.message).toContain('PUSHER_MAX_CHANNELS');
  });

  it('takes data of exactly PUSHER_MAX_DATA_BYTES (UTF-8) and refuses a byte more with 413', () => {
    const full = 'é'.repeat(5120);
    expect(parse('events', event({ data: full })).events[0]?.data).toBe(full);
    const err = refusal(() => parse('events', event({ data: `${full}x` })));
    expect([err.status, err.code, err.field]).toEqual([413, 'payload_too_large', 'data']);
    expect(err.message).toContain('10241 bytes');
  });

  it('takes an event name of exactly PUSHER_MAX_EVENT_NAME characters, refuses one more', () => {
    expect(parse('events', event({ name: 'n'.repeat(200) })).events[0]?.name).toHaveLength(200);
    const err = refusal(() => parse('events', event({ name: 'n'.repeat(201) })));
    expect([err.status, err.field]).toEqual([400, 'name']);
  });

  it(`takes a channel name of ${PUSHER_LIMITS.channelName} characters, refuses one more`, () => {
    const max = 'c'.repeat(PUSHER_LIMITS.channelName);
    expect(parse('events', event({ channels: [max] })).events[0]?.channels).toEqual([max]);
    const err = refusal(() => parse('events', event({ channels: ['news', `${max}c`] })));
    expect([err.status, err.field]).toEqual([400, 'channels[1]']);
  });

  it('refuses bad shapes, each naming its field', () => {
    const cases: Array<[unknown, string]> = [
      ['not json', 'body'],
      [[1], 'body'],
      [event({ name: '' }), 'name'],
      [event({ name: 'pusher:subscribe' }), 'name'],
      [event({ data: { hi: 1 } }), 'data'],
      [event({ channels: [] }), 'channels'],
      [event({ channels: 'news' }), 'channels'],
      [event({ channels: ['a b'] }), 'channels[0]'],
      [event({ channels: ['#other'] }), 'channels[0]'],
      [event({ channels: ['#server-to-user-'] }), 'user_id'],
      [event({ channel: 'news' }), 'channels'],
      [event({ socket_id: 'abc' }), 'socket_id'],
    ];
    for (const [body, field] of cases) {
      const err = refusal(() => parse('events', body));
      expect([err.status, err.field]).toEqual([400, field]);
    }
  });

  it("accepts the library's sendToUser channel, #server-to-user-<id>", () => {
    const parsed = parse('events', event({ channels: ['#server-to-user-42'] }));
    expect(parsed.events[0]?.channels).toEqual(['#server-to-user-42']);
  });
});

describe('parsePusherBody: batch_events, users/{id}/events, terminate_connections', () => {
  const item = (i: number) => ({ name: 'e', data: String(i), channel: `ch-${i}` });

  it('takes exactly PUSHER_MAX_BATCH_EVENTS events, refuses one more', () => {
    const ten = parse('batch_events', { batch: Array.from({ length: 10 }, (_, i) => item(i)) });
    expect(ten.events.map((e) => e.channels)).toEqual(channels(10).map((c) => [c]));
    const err = refusal(() =>
      parse('batch_events', { batch: Array.from({ length: 11 }, (_, i) => item(i)) }),
    );
    expect([err.status, err.field]).toEqual([400, 'batch']);
    expect(err.message).toContain('PUSHER_MAX_BATCH_EVENTS');
  });

  it("names a batch event's field by its index, and notes info", () => {
    const err = refusal(() => parse('batch_events', { batch: [item(0), { ...item(1), data: 1 }] }));
    expect(err.field).toBe('batch[1].data');
    expect(parse('batch_events', { batch: [{ ...item(0), info: 'subscription_count' }] })).toEqual({
      events: [{ name: 'e', data: '0', channels: ['ch-0'] }],
      batchInfo: true,
    });
  });

  it("sends a user route's event to #server-to-user-<id>, and checks the id", () => {
    const parsed = parse('user_events', { name: 'n', data: 'd' }, 'user-1');
    expect(parsed.events[0]?.channels).toEqual(['#server-to-user-user-1']);
    expect(refusal(() => parse('user_events', { name: 'n', data: 'd' }, 'a/b')).field).toBe(
      'user_id',
    );
  });

  it('reads nothing from terminate_connections but JSON', () => {
    expect(parse('terminate_connections', {}, 'u')).toEqual({ events: [], batchInfo: false });
    expect(parsePusherBody('terminate_connections', new Uint8Array(), LIMITS, 'u').events).toEqual(
      [],
    );
  });
});
