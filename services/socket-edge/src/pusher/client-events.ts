import { authorizeRecipient, channelAuthOk, pusherRecipient, userAuthOk } from '@herald/access';
import {
  DEVICE_FORMAT,
  HeraldError,
  PUSHER_CHANNEL_NAME,
  PUSHER_LIMITS,
  SERVER_TO_USER_PREFIX,
  userOfChannel,
} from '@herald/proto';
import type { RawData } from 'ws';
import { Membership } from './membership.js';
import type { PusherContext } from './pusher-context.js';
import {
  dataObject,
  exactPingPong,
  PONG_FRAME,
  PusherClose,
  readPusherFrame,
  signinSuccess,
  subscriptionError,
  subscriptionSucceeded,
} from './pusher-frames.js';
import type { PusherSocket } from './pusher-socket.js';

/**
 * Acts on one client frame of a Pusher socket: `pusher:ping` (answered `pusher:pong`),
 * `pusher:pong` (proves the member socket's writes before the last `pusher:ping`),
 * `pusher:subscribe` / `pusher:unsubscribe`, `pusher:signin`. `client-` events are ignored (not
 * supported yet); anything else is counted as malformed and ignored.
 */
export function handleClientFrame(
  ctx: PusherContext,
  socket: PusherSocket,
  raw: RawData,
  isBinary: boolean,
): void {
  // The pong that proves each tick's events, and pusher-js's own ping, need no parse.
  const exact = exactPingPong(raw, isBinary);
  if (exact === 'pong') {
    socket.member?.proofAnswered();
    return;
  }
  if (exact === 'ping') {
    socket.send(PONG_FRAME);
    return;
  }
  const frame = readPusherFrame(raw, isBinary);
  switch (frame?.event) {
    case 'pusher:ping':
      socket.send(PONG_FRAME);
      return;
    case 'pusher:pong':
      socket.member?.proofAnswered();
      return;
    case 'pusher:subscribe':
      subscribe(ctx, socket, dataObject(frame.data));
      return;
    case 'pusher:unsubscribe':
      unsubscribe(ctx, socket, dataObject(frame.data));
      return;
    case 'pusher:signin':
      signin(ctx, socket, dataObject(frame.data));
      return;
    default:
      if (frame?.event.startsWith('client-')) return;
      ctx.metrics.malformedClientFrames.inc();
  }
}

function subscribe(
  ctx: PusherContext,
  socket: PusherSocket,
  data: Record<string, unknown> | undefined,
): void {
  const channel = data?.channel;
  if (
    typeof channel !== 'string' ||
    channel.length > PUSHER_LIMITS.channelName ||
    !PUSHER_CHANNEL_NAME.test(channel)
  ) {
    const named = typeof channel === 'string' ? channel : '';
    socket.send(
      subscriptionError(
        named,
        'InvalidChannel',
        `channel must be 1 to ${PUSHER_LIMITS.channelName} characters of A-Z, a-z, 0-9 and -_=@,.; (a leading # only for #server-to-user-<id>)`,
        400,
      ),
    );
    return;
  }
  const refuse = (type: string, error: string, status: number) =>
    socket.send(subscriptionError(channel, type, error, status));
  if (socket.channels.has(channel)) {
    socket.send(subscriptionSucceeded(channel));
    return;
  }
  if (socket.channels.size >= ctx.maxChannels) {
    refuse(
      'LimitReached',
      `a connection may subscribe to ${ctx.maxChannels} channels (PUSHER_MAX_CHANNELS_PER_SOCKET): unsubscribe one first`,
      400,
    );
    return;
  }
  if (channel.startsWith('#')) {
    const id = channel.startsWith(SERVER_TO_USER_PREFIX)
      ? channel.slice(SERVER_TO_USER_PREFIX.length)
      : undefined;
    if (id === undefined || socket.signedIn?.id !== id) {
      refuse(
        'AuthError',
        `sign in as user ${id ?? '?'} (pusher.signin()) before subscribing ${channel}`,
        401,
      );
      return;
    }
    socket.channels.add(channel);
    socket.send(subscriptionSucceeded(channel));
    return;
  }
  if (channel.startsWith('presence-')) {
    refuse(
      'UnsupportedChannel',
      'presence channels are not supported yet: use a private- channel',
      400,
    );
    return;
  }
  let userId: string | undefined;
  if (channel.startsWith('private-')) {
    const auth = data?.auth;
    if (typeof auth !== 'string' || !channelAuthOk(socket.app, socket.socketId, channel, auth)) {
      ctx.metrics.rejections.inc({ code: 'invalid_channel_auth' });
      refuse(
        'AuthError',
        `auth is not this app's signature of ${socket.socketId}:${channel}: sign it with the app secret (pusher.authorizeChannel)`,
        401,
      );
      return;
    }
    userId = userOfChannel(socket.app.user_channel, channel);
  }
  let recipient: string | undefined;
  if (userId !== undefined) {
    recipient = memberRecipient(socket, userId, (message) => refuse('AuthError', message, 403));
    if (recipient === undefined) return;
  }
  socket.channels.add(channel);
  // Succeeded once nats-server has the edge's subscription: a trigger made on seeing it arrives.
  void ctx.fanout.join(socket.account, socket.app.app_id, channel, socket).then(() => {
    if (socket.channels.has(channel)) socket.send(subscriptionSucceeded(channel));
  });
  if (userId !== undefined && recipient !== undefined && !socket.member) {
    socket.member = new Membership(socket, { recipient, userId, viaChannel: channel });
    void socket.member.join(ctx);
  }
}

function unsubscribe(
  ctx: PusherContext,
  socket: PusherSocket,
  data: Record<string, unknown> | undefined,
): void {
  const channel = data?.channel;
  if (typeof channel !== 'string' || !socket.channels.delete(channel)) return;
  // The membership stays: the socket keeps receiving its user's events until it closes.
  if (!channel.startsWith('#'))
    ctx.fanout.leave(socket.account, socket.app.app_id, channel, socket);
}

function signin(
  ctx: PusherContext,
  socket: PusherSocket,
  data: Record<string, unknown> | undefined,
): void {
  const fail = (message: string) => {
    ctx.metrics.rejections.inc({ code: 'invalid_signin' });
    socket.refuse(PusherClose.unauthorized, message);
  };
  const auth = data?.auth;
  const userData = data?.user_data;
  if (typeof auth !== 'string' || typeof userData !== 'string') {
    fail(
      'pusher:signin needs auth and user_data strings (pusher.signin() with a user authentication endpoint)',
    );
    return;
  }
  if (!userAuthOk(socket.app, socket.socketId, userData, auth)) {
    fail(
      `auth is not this app's signature of ${socket.socketId}::user::<user_data>: sign it with the app secret (pusher.authenticateUser)`,
    );
    return;
  }
  const user = dataObject(userData);
  const id = user?.id;
  if (typeof id !== 'string' || id === '') {
    fail('user_data must be a JSON object with a non-empty string id');
    return;
  }
  const device = user?.device;
  if (device !== undefined && (typeof device !== 'string' || !DEVICE_FORMAT.test(device))) {
    fail(
      'user_data.device must be 1 to 64 characters of A-Z, a-z, 0-9, _ and -: send one id per installation, or leave it out',
    );
    return;
  }
  const recipient = memberRecipient(socket, id, fail);
  if (recipient === undefined) return;
  if (socket.signedIn && socket.signedIn.id !== id) {
    fail(
      `this connection signed in as another user: one user per connection (reconnect to sign in as ${id})`,
    );
    return;
  }
  socket.signedIn = { id };
  socket.send(signinSuccess(userData));
  if (socket.member) return;
  socket.member = new Membership(socket, {
    recipient,
    userId: id,
    ...(device === undefined ? {} : { device }),
  });
  void socket.member.join(ctx);
}

/**
 * The recipient of a user id of the socket's app, checked: a UUID v4 for a `uuid` app, not the
 * account's dashboard recipient, the same as the socket's membership if it has one. Undefined
 * (and `refuse` told why) otherwise.
 */
function memberRecipient(
  socket: PusherSocket,
  userId: string,
  refuse: (message: string) => void,
): string | undefined {
  const recipient = pusherRecipient(socket.app.app_id, userId, socket.app.user_ids);
  if (recipient === undefined) {
    refuse(
      `user id ${JSON.stringify(userId).slice(0, 80)} is not a UUID v4, which this app's users must be (--user-ids uuid): send UUIDs, or make the app with --user-ids any`,
    );
    return undefined;
  }
  try {
    authorizeRecipient(socket.key, recipient, 'socket');
  } catch (err) {
    refuse(err instanceof HeraldError ? err.message : 'this user cannot be served');
    return undefined;
  }
  if (socket.member && socket.member.recipient !== recipient) {
    refuse("this connection already receives another user's events: one user per connection");
    return undefined;
  }
  return recipient;
}
