import { randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { isUuidV4 } from '@herald/proto';
import Pusher from 'pusher';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  bodyMd5,
  channelAuthOk,
  pusherRecipient,
  requestSignature,
  stringsEqual,
  userAuthOk,
} from './pusher-sign.js';

/**
 * Herald's Pusher signatures against the stock `pusher` server library (5.3.4) as the oracle: what
 * it signs for a channel, a sign-in or an HTTP request passes; anything tampered fails.
 */

const APP = {
  appId: '1234567890',
  key: 'a1b2c3d4e5f60718293a',
  secret: randomBytes(20).toString('hex'),
};
const SOCKET = '123456.7890123';

/** The library, signing with `secret` and sending to `port` (a capturing server) when asked. */
function library(port = 1, secret = APP.secret): Pusher {
  return new Pusher({
    ...APP,
    secret,
    host: '127.0.0.1',
    port: String(port),
    useTLS: false,
    encryptionMasterKeyBase64: randomBytes(32).toString('base64'),
  });
}

/** Flips one hex character of the signature after `<key>:`. */
function tamper(auth: string): string {
  const i = auth.length - 1;
  return `${auth.slice(0, i)}${auth[i] === '0' ? '1' : '0'}`;
}

describe('channelAuthOk', () => {
  it("passes the library's private and private-encrypted authorisations", () => {
    const pusher = library();
    for (const channel of [
      'private-orders',
      'private-encrypted-inbox',
      'private-App.Models.User.42',
    ]) {
      const { auth } = pusher.authorizeChannel(SOCKET, channel);
      expect(auth.startsWith(`${APP.key}:`)).toBe(true);
      expect(channelAuthOk(APP, SOCKET, channel, auth)).toBe(true);
    }
  });

  it("passes a presence authorisation with the library's channel_data", () => {
    const { auth, channel_data } = library().authorizeChannel(SOCKET, 'presence-room', {
      user_id: '42',
      user_info: { name: 'Ada' },
    });
    expect(channel_data).toBeDefined();
    expect(channelAuthOk(APP, SOCKET, 'presence-room', auth, channel_data)).toBe(true);
    expect(channelAuthOk(APP, SOCKET, 'presence-room', auth)).toBe(false);
    expect(channelAuthOk(APP, SOCKET, 'presence-room', auth, `${channel_data} `)).toBe(false);
  });

  it('fails a tampered signature, another socket, channel, key or secret', () => {
    const { auth } = library().authorizeChannel(SOCKET, 'private-orders');
    expect(channelAuthOk(APP, SOCKET, 'private-orders', tamper(auth))).toBe(false);
    expect(channelAuthOk(APP, '123456.7890124', 'private-orders', auth)).toBe(false);
    expect(channelAuthOk(APP, SOCKET, 'private-order', auth)).toBe(false);
    expect(
      channelAuthOk({ ...APP, key: 'ffffffffffffffffffff' }, SOCKET, 'private-orders', auth),
    ).toBe(false);
    const other = library(1, randomBytes(20).toString('hex')).authorizeChannel(
      SOCKET,
      'private-orders',
    );
    expect(channelAuthOk(APP, SOCKET, 'private-orders', other.auth)).toBe(false);
    expect(channelAuthOk(APP, SOCKET, 'private-orders', '')).toBe(false);
    expect(channelAuthOk(APP, SOCKET, 'private-orders', auth.split(':')[1] ?? '')).toBe(false);
  });
});

describe('userAuthOk', () => {
  it("passes the library's sign-in, with its user_data as sent, and fails anything changed", () => {
    const { auth, user_data } = library().authenticateUser(SOCKET, {
      id: '6f1c1e0e-5d7a-4a53-9b0a-2c1d3e4f5a6b',
      user_info: { name: 'Ada' },
      device: 'laptop',
    } as Pusher.UserChannelData);
    expect(userAuthOk(APP, SOCKET, user_data, auth)).toBe(true);
    expect(userAuthOk(APP, SOCKET, user_data, tamper(auth))).toBe(false);
    expect(userAuthOk(APP, '1.2', user_data, auth)).toBe(false);
    expect(userAuthOk(APP, SOCKET, user_data.replace('Ada', 'Eve'), auth)).toBe(false);
    // A channel authorisation is not a sign-in, even for the same text's socket.
    const channel = library().authorizeChannel(SOCKET, 'private-x');
    expect(userAuthOk(APP, SOCKET, user_data, channel.auth)).toBe(false);
  });
});

describe('requestSignature and bodyMd5', () => {
  /** Every request the library sent: method, path, decoded query and body. */
  const seen: { method: string; path: string; query: Record<string, string>; body: string }[] = [];
  let server: http.Server;
  let port: number;

  beforeAll(async () => {
    server = http.createServer((req, res) => {
      let body = '';
      req.setEncoding('utf8');
      req.on('data', (c: string) => {
        body += c;
      });
      req.on('end', () => {
        const url = new URL(req.url ?? '/', 'http://127.0.0.1');
        seen.push({
          method: req.method ?? '',
          path: url.pathname,
          query: Object.fromEntries(url.searchParams),
          body,
        });
        res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve));
  });

  it('matches what the library signs for trigger, batch, sendToUser, terminate and a GET with params', async () => {
    const pusher = library(port);
    seen.length = 0;
    await pusher.trigger(['orders', 'private-App.Models.User.42'], 'order.shipped', {
      id: 7,
      note: 'ünïcode & more',
    });
    await pusher.triggerBatch([{ channel: 'orders', name: 'a', data: '{"x":1}' }]);
    await pusher.sendToUser('42', 'hello', { hi: true });
    await pusher.terminateUserConnections('42');
    await pusher.get({
      path: '/channels',
      params: { filter_by_prefix: 'presence-', info: 'user_count' },
    });
    expect(seen.map((r) => `${r.method} ${r.path}`)).toEqual([
      `POST /apps/${APP.appId}/events`,
      `POST /apps/${APP.appId}/batch_events`,
      // sendToUser is a trigger to `#server-to-user-<id>` in pusher 5.3.4, not /users/{id}/events.
      `POST /apps/${APP.appId}/events`,
      `POST /apps/${APP.appId}/users/42/terminate_connections`,
      `GET /apps/${APP.appId}/channels`,
    ]);
    expect(JSON.parse(seen[2]?.body ?? '{}')).toMatchObject({
      name: 'hello',
      channels: ['#server-to-user-42'],
    });
    for (const r of seen) {
      expect(r.query.auth_key).toBe(APP.key);
      expect(r.query.auth_version).toBe('1.0');
      const signature = r.query.auth_signature ?? '';
      expect(signature).toMatch(/^[0-9a-f]{64}$/);
      expect(stringsEqual(requestSignature(APP.secret, r.method, r.path, r.query), signature)).toBe(
        true,
      );
      // The method is upper-cased, as the library signs it.
      expect(requestSignature(APP.secret, r.method.toLowerCase(), r.path, r.query)).toBe(signature);
      if (r.method === 'POST') expect(r.query.body_md5).toBe(bodyMd5(r.body));
      else expect(r.query.body_md5).toBeUndefined();
    }
  });

  it('fails a tampered request: another path, method, parameter, body or secret', async () => {
    seen.length = 0;
    await library(port).trigger('orders', 'e', { n: 1 });
    const r = seen[0];
    if (!r) throw new Error('the library sent nothing');
    const signature = r.query.auth_signature;
    const sign = (o: Partial<typeof r> & { secret?: string }) =>
      requestSignature(
        o.secret ?? APP.secret,
        o.method ?? r.method,
        o.path ?? r.path,
        o.query ?? r.query,
      );
    expect(sign({})).toBe(signature);
    expect(sign({ path: `/apps/${APP.appId}/batch_events` })).not.toBe(signature);
    expect(sign({ method: 'PUT' })).not.toBe(signature);
    expect(
      sign({ query: { ...r.query, auth_timestamp: String(Number(r.query.auth_timestamp) + 1) } }),
    ).not.toBe(signature);
    expect(sign({ query: { ...r.query, body_md5: bodyMd5(`${r.body} `) } })).not.toBe(signature);
    expect(sign({ query: { ...r.query, extra: '1' } })).not.toBe(signature);
    expect(sign({ secret: randomBytes(20).toString('hex') })).not.toBe(signature);
    expect(bodyMd5(`${r.body} `)).not.toBe(r.query.body_md5);
  });
});

describe('stringsEqual', () => {
  it('is plain equality, false for different lengths', () => {
    expect(stringsEqual('abc', 'abc')).toBe(true);
    expect(stringsEqual('abc', 'abd')).toBe(false);
    expect(stringsEqual('abc', 'abcd')).toBe(false);
    expect(stringsEqual('', '')).toBe(true);
  });
});

describe('pusherRecipient', () => {
  const v4 = '6F1C1E0E-5D7A-4A53-9B0A-2C1D3E4F5A6B';

  it('uuid mode: a UUID v4 in any case is its lower-cased self; anything else is refused', () => {
    expect(pusherRecipient(APP.appId, v4, 'uuid')).toBe(v4.toLowerCase());
    expect(pusherRecipient(APP.appId, v4.toLowerCase(), 'uuid')).toBe(v4.toLowerCase());
    for (const id of [
      '42',
      '',
      'user@example.com',
      '6f1c1e0e-5d7a-1a53-9b0a-2c1d3e4f5a6b',
      '6f1c1e0e-5d7a-4a53-7b0a-2c1d3e4f5a6b',
      `${v4}0`,
    ]) {
      expect(pusherRecipient(APP.appId, id, 'uuid'), id).toBeUndefined();
    }
  });

  it('any mode: stable, v4-shaped, different per app and per id, and not the id itself', () => {
    const a = pusherRecipient(APP.appId, '42', 'any');
    expect(a).toBe(pusherRecipient(APP.appId, '42', 'any'));
    expect(isUuidV4(a)).toBe(true);
    expect(a).toBe(a?.toLowerCase());
    expect(pusherRecipient('1234567891', '42', 'any')).not.toBe(a);
    expect(pusherRecipient(APP.appId, '43', 'any')).not.toBe(a);
    const fromUuid = pusherRecipient(APP.appId, v4, 'any');
    expect(isUuidV4(fromUuid)).toBe(true);
    expect(fromUuid).not.toBe(v4.toLowerCase());
    const many = new Set(
      Array.from({ length: 1000 }, (_, i) => pusherRecipient(APP.appId, String(i), 'any')),
    );
    expect(many.size).toBe(1000);
    for (const r of many) expect(isUuidV4(r)).toBe(true);
  });
});
