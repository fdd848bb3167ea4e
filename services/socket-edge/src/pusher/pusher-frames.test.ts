import { HeraldError } from '@herald/proto';
import { describe, expect, it } from 'vitest';
import {
  closeReason,
  connectionEstablished,
  dataObject,
  PusherClose,
  pusherCloseOf,
  readPusherFrame,
} from './pusher-frames.js';

describe('Pusher frames', () => {
  it('writes the handshake data as a JSON string holding socket_id and activity_timeout', () => {
    const frame = JSON.parse(connectionEstablished('12.34', 120));
    expect(frame.event).toBe('pusher:connection_established');
    expect(JSON.parse(frame.data)).toEqual({ socket_id: '12.34', activity_timeout: 120 });
  });

  it('reads client frames whose data is an object or a JSON string, and nothing else', () => {
    const text = (v: string) => Buffer.from(v);
    expect(
      readPusherFrame(text('{"event":"pusher:subscribe","data":{"channel":"a"}}'), false),
    ).toEqual({ event: 'pusher:subscribe', data: { channel: 'a' }, channel: undefined });
    const frame = readPusherFrame(text('{"event":"x","data":"{\\"channel\\":\\"b\\"}"}'), false);
    expect(dataObject(frame?.data)).toEqual({ channel: 'b' });
    expect(readPusherFrame(text('{"event":"x"}'), true)).toBeUndefined();
    expect(readPusherFrame(text('[1]'), false)).toBeUndefined();
    expect(readPusherFrame(text('{"event":3}'), false)).toBeUndefined();
    expect(readPusherFrame(text('nope'), false)).toBeUndefined();
    expect(dataObject('not json')).toBeUndefined();
    expect(dataObject([1])).toBeUndefined();
  });

  it('maps refusals to the close codes pusher-js acts on', () => {
    const code = (c: ConstructorParameters<typeof HeraldError>[0]) =>
      pusherCloseOf(new HeraldError(c, 'x'));
    expect(code('invalid_api_key')).toBe(PusherClose.unknownApp);
    expect(code('key_revoked')).toBe(PusherClose.appDisabled);
    expect(code('plan_inactive')).toBe(PusherClose.appDisabled);
    expect(code('connection_limit')).toBe(PusherClose.overQuota);
    expect(code('unavailable')).toBe(PusherClose.overCapacity);
    expect(code('too_many_connects')).toBe(PusherClose.overCapacity);
    expect(code('origin_mismatch')).toBe(PusherClose.unauthorized);
    expect(code('scope_denied')).toBe(PusherClose.unauthorized);
  });

  it('keeps close reasons printable and within a close frame', () => {
    expect(closeReason('é'.repeat(200))).toBe('?'.repeat(120));
  });
});
