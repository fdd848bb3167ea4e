import PusherServer from 'pusher';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { payloadMaker } from '../payload.js';
import {
  isPing,
  PING_FRAME,
  seqOfPusherFrame,
  signedPath,
  signinAuth,
  userEnvelope,
  userEventRequest,
} from './pusher-wire.js';

const app = { app_id: '1234567890', key: 'a'.repeat(20), secret: 'b'.repeat(40) };
const server = new PusherServer({
  appId: app.app_id,
  key: app.key,
  secret: app.secret,
  host: '127.0.0.1',
});

afterEach(() => {
  vi.restoreAllMocks();
});

describe('figure 9 Pusher wire', () => {
  it('signs a request exactly as the pusher library does', () => {
    vi.spyOn(Date, 'now').mockReturnValue(1_800_000_000_123);
    const [path, body] = userEventRequest(app, 'user-1', '{"seq":"0000000001"}');
    const bare = `/apps/${app.app_id}/users/user-1/events`;
    const query = server.createSignedQueryString({ method: 'POST', path: bare, body });
    expect(path).toBe(`${bare}?${query}`);
    expect(signedPath(app, '/apps/1/events', '{}', 1_800_000_000)).toBe(
      `/apps/1/events?${server.createSignedQueryString({ method: 'POST', path: '/apps/1/events', body: '{}' })}`,
    );
  });

  it("signs a sign-in as the pusher library's authenticateUser does", () => {
    const signed = server.authenticateUser('123.456', { id: 'u' });
    expect(signinAuth(app, '123.456', signed.user_data)).toBe(signed.auth);
  });

  it('reads the sequence number from a user event, a channel event and nothing else', () => {
    const payload = payloadMaker(256).make(4242);
    const spliced = `{"herald_id":"0b0e…",${payload.slice(1)}`;
    const user = JSON.stringify({ event: 'bench', channel: '#server-to-user-u', data: spliced });
    const channel = JSON.stringify({ event: 'bench', channel: 'bench-1', data: payload });
    expect(seqOfPusherFrame(Buffer.from(user))).toBe(4242);
    expect(seqOfPusherFrame(Buffer.from(channel))).toBe(4242);
    expect(seqOfPusherFrame(PING_FRAME)).toBe(-1);
    expect(seqOfPusherFrame(Buffer.from('{"event":"x","data":"{\\"seq\\":\\"12"}'))).toBe(-1);
  });

  it('tells the ping from every other frame', () => {
    expect(isPing(Buffer.from('{"event":"pusher:ping","data":{}}'))).toBe(true);
    expect(isPing(Buffer.from('{"event":"pusher:pong","data":{}}'))).toBe(false);
  });

  it('stores what sendToUser stores: the envelope with the data as sent', () => {
    const payload = payloadMaker(128).make(7);
    expect(JSON.parse(userEnvelope('u', payload))).toEqual({
      event: 'bench',
      channel: '#server-to-user-u',
      data: payload,
    });
  });
});
