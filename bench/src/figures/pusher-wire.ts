import { createHmac } from 'node:crypto';
import { bodyMd5, requestSignature } from '@herald/access';
import type WebSocket from 'ws';
import type { HeraldStack, PusherApp } from '../env/herald-stack.js';
import { SEQ_DIGITS } from '../payload.js';

/*
 * How the load generator speaks Pusher to Herald (figure 9), as cheaply as it speaks Herald's own
 * protocol: the `pusher` library's signed HTTP requests with lib/access's signature (no client
 * library in the loop), and raw `ws` sockets doing what pusher-js does on the wire (sign in,
 * subscribe, answer `pusher:ping` with `pusher:pong`).
 */

/** The event name every figure 9 event carries. */
export const BENCH_EVENT = 'bench';

export const PING_FRAME = Buffer.from('{"event":"pusher:ping","data":{}}');
export const PONG_FRAME = '{"event":"pusher:pong","data":{}}';

/** The `/app/{key}` URL pusher-js 8 opens. */
export function pusherUrl(stack: HeraldStack, app: PusherApp): string {
  return `${stack.wsUrl}/app/${app.key}?protocol=7&client=js&version=8.6.0&flash=false`;
}

/**
 * `path` with Pusher's signed query, as the `pusher` library builds it: `auth_key`,
 * `auth_timestamp`, `auth_version`, `body_md5`, then `auth_signature` over them.
 */
export function signedPath(
  app: PusherApp,
  path: string,
  body: string,
  nowS = Math.floor(Date.now() / 1000),
): string {
  const params: Record<string, string> = {
    auth_key: app.key,
    auth_timestamp: String(nowS),
    auth_version: '1.0',
    body_md5: bodyMd5(body),
  };
  const signature = requestSignature(app.secret, 'POST', path, params);
  return `${path}?${new URLSearchParams({ ...params, auth_signature: signature })}`;
}

/** `sendToUser`'s request: `POST /apps/{id}/users/{uid}/events` `{name, data}`, data a string. */
export function userEventRequest(
  app: PusherApp,
  userId: string,
  payloadJson: string,
): [path: string, body: string] {
  const body = `{"name":"${BENCH_EVENT}","data":${JSON.stringify(payloadJson)}}`;
  return [signedPath(app, `/apps/${app.app_id}/users/${userId}/events`, body), body];
}

/** `trigger`'s request: `POST /apps/{id}/events` to one channel. */
export function triggerRequest(
  app: PusherApp,
  channel: string,
  payloadJson: string,
): [path: string, body: string] {
  const body = `{"name":"${BENCH_EVENT}","channel":"${channel}","data":${JSON.stringify(payloadJson)}}`;
  return [signedPath(app, `/apps/${app.app_id}/events`, body), body];
}

/**
 * What `sendToUser` stores for an offline user: the PusherEnvelope payload ingress queues
 * (docs/api.md, "Durable or live"), the bench payload as its data string.
 */
export function userEnvelope(userId: string, payloadJson: string): string {
  return JSON.stringify({
    event: BENCH_EVENT,
    channel: `#server-to-user-${userId}`,
    data: payloadJson,
  });
}

/** The public channel socket i subscribes to, so one `trigger` is one delivery. */
export const publicChannel = (i: number) => `bench-${i}`;

/** Where the sequence number sits in a Pusher frame: the payload is a JSON string in `data`. */
const SEQ_MARK = Buffer.from('seq\\":\\"');

/**
 * The sequence number of the bench payload inside a Pusher frame (its data is the payload as a
 * JSON string, with `herald_id` spliced in first for a recipient's event), or -1 for a frame
 * without one (the protocol's own).
 */
export function seqOfPusherFrame(data: Buffer): number {
  const at = data.indexOf(SEQ_MARK);
  if (at < 0) return -1;
  const start = at + SEQ_MARK.length;
  if (start + SEQ_DIGITS > data.length) return -1;
  let n = 0;
  for (let k = start; k < start + SEQ_DIGITS; k++) {
    const d = (data[k] as number) - 48;
    if (d < 0 || d > 9) return -1;
    n = n * 10 + d;
  }
  return n;
}

/** The edge's `pusher:ping` (its proof ping after a tick's events, or its activity ping). */
export function isPing(data: Buffer): boolean {
  return data.length === PING_FRAME.length && data.equals(PING_FRAME);
}

/**
 * Socket i's frames as pusher-js handles them: a `pusher:ping` answered with `pusher:pong` at
 * once (the proof the edge waits for), and each frame that carries a bench event handed on.
 */
export function pusherFrames(onEvent: (i: number, seq: number) => void) {
  return (i: number, data: Buffer, ws: WebSocket): void => {
    if (isPing(data)) {
      ws.send(PONG_FRAME);
      return;
    }
    const seq = seqOfPusherFrame(data);
    if (seq >= 0) onEvent(i, seq);
  };
}

/** `pusher:signin`'s `auth`: `<key>:` + hex HMAC-SHA256(secret, `socket_id::user::user_data`). */
export function signinAuth(app: PusherApp, socketId: string, userData: string): string {
  const mac = createHmac('sha256', app.secret).update(`${socketId}::user::${userData}`);
  return `${app.key}:${mac.digest('hex')}`;
}

/**
 * A Pusher socket's own handshake after the upgrade, for WsFleet: `pusher:connection_established`,
 * then `pusher:signin` as user `userId(i)` (pusher-js's `signin()` with the app's user
 * authentication), and, when `channel(i)` names one, a public channel's subscribe; resolves on
 * `pusher:signin_success` (and the subscription's success). A `pusher:error` or a failed
 * subscription rejects with its text.
 */
export function pusherHandshake(
  app: PusherApp,
  userId: (i: number) => string,
  channel?: (i: number) => string,
): (i: number, ws: WebSocket) => Promise<void> {
  return (i, ws) =>
    new Promise<void>((resolve, reject) => {
      let signedIn = false;
      let subscribed = channel === undefined;
      const done = () => {
        if (!signedIn || !subscribed) return;
        ws.off('message', onMessage);
        resolve();
      };
      const onMessage = (data: Buffer) => {
        if (isPing(data) || seqOfPusherFrame(data) >= 0) return;
        const frame = JSON.parse(data.toString('utf8')) as { event: string; data: unknown };
        switch (frame.event) {
          case 'pusher:connection_established': {
            const { socket_id } = JSON.parse(frame.data as string) as { socket_id: string };
            const userData = JSON.stringify({ id: userId(i) });
            const auth = signinAuth(app, socket_id, userData);
            ws.send(
              JSON.stringify({ event: 'pusher:signin', data: { auth, user_data: userData } }),
            );
            if (channel) {
              ws.send(JSON.stringify({ event: 'pusher:subscribe', data: { channel: channel(i) } }));
            }
            return;
          }
          case 'pusher:signin_success':
            signedIn = true;
            return done();
          case 'pusher_internal:subscription_succeeded':
            subscribed = true;
            return done();
          case 'pusher:error':
          case 'pusher:subscription_error':
            ws.off('message', onMessage);
            reject(new Error(`${frame.event}: ${JSON.stringify(frame.data).slice(0, 200)}`));
            return;
          default:
            return;
        }
      };
      ws.on('message', onMessage);
    });
}
