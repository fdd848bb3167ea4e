import { createECDH, randomBytes } from 'node:crypto';
import https from 'node:https';
import ece from 'http_ece';
import { exportJWK, generateKeyPair, SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PushService, type TestWebPushSubscription } from './push-service.js';

let svc: PushService;
beforeAll(async () => {
  svc = await PushService.start();
});
afterAll(async () => {
  await svc?.stop();
});

/** A push as an application server sends it: aes128gcm to the subscription, a VAPID header. */
async function send(
  sub: TestWebPushSubscription,
  claims: { aud: string; expInS: number; sub?: string },
): Promise<number> {
  const sender = createECDH('prime256v1');
  sender.generateKeys();
  const body = ece.encrypt(Buffer.from('{"hello":"world"}'), {
    version: 'aes128gcm',
    privateKey: sender,
    dh: sub.keys.p256dh,
    authSecret: sub.keys.auth,
  });
  const { privateKey, publicKey } = await generateKeyPair('ES256');
  const jwk = await exportJWK(publicKey);
  const k = Buffer.concat([
    Buffer.from([4]),
    Buffer.from(jwk.x as string, 'base64url'),
    Buffer.from(jwk.y as string, 'base64url'),
  ]).toString('base64url');
  const jwt = await new SignJWT(claims.sub ? { sub: claims.sub } : {})
    .setProtectedHeader({ alg: 'ES256', typ: 'JWT' })
    .setAudience(claims.aud)
    .setExpirationTime(Math.floor(Date.now() / 1000) + claims.expInS)
    .sign(privateKey);
  return new Promise((resolve, reject) => {
    const req = https.request(sub.endpoint, {
      method: 'POST',
      ca: svc.certs.ca,
      headers: {
        ttl: '60',
        topic: 'abc',
        'content-encoding': 'aes128gcm',
        authorization: `vapid t=${jwt}, k=${k}`,
      },
    });
    req.on('response', (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('error', reject);
    req.end(body);
  });
}

describe('the test push service', () => {
  it('decrypts a push and verifies its VAPID header; headers are kept', async () => {
    const sub = svc.subscribe();
    expect(Buffer.from(sub.keys.p256dh, 'base64url')).toHaveLength(65);
    expect(Buffer.from(sub.keys.auth, 'base64url')).toHaveLength(16);
    expect(await send(sub, { aud: svc.origin, expInS: 3600, sub: 'mailto:a@b.c' })).toBe(201);
    const [a] = svc.arrivals(sub.endpoint);
    expect(a).toMatchObject({
      status: 201,
      ttl: '60',
      topic: 'abc',
      error: null,
      message: { hello: 'world' },
      vapid: { aud: svc.origin, sub: 'mailto:a@b.c' },
    });
  });

  it('records a VAPID header with the wrong audience, an expiry past 24 h or no subject as an error', async () => {
    const sub = svc.subscribe();
    await send(sub, { aud: 'https://elsewhere.example', expInS: 3600, sub: 'mailto:a@b.c' });
    await send(sub, { aud: svc.origin, expInS: 25 * 3600, sub: 'mailto:a@b.c' });
    await send(sub, { aud: svc.origin, expInS: 3600 });
    const errors = svc.arrivals(sub.endpoint).map((a) => a.error);
    expect(errors[0]).toContain('aud');
    expect(errors[1]).toContain('within 24 h');
    expect(errors[2]).toContain('sub is missing');
  });

  it('answers as told for the next N requests, then 201; an unknown subscription is 404', async () => {
    const sub = svc.subscribe();
    svc.answer(sub.endpoint, 410, 2);
    const ok = { aud: svc.origin, expInS: 60, sub: 'mailto:a@b.c' };
    expect([await send(sub, ok), await send(sub, ok), await send(sub, ok)]).toEqual([
      410, 410, 201,
    ]);
    const gone = { ...sub, endpoint: `${svc.origin}/push/${randomBytes(8).toString('hex')}` };
    expect(await send(gone, ok)).toBe(404);
  });
});
