import { readFileSync } from 'node:fs';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import {
  addressRange,
  ForbiddenAddressError,
  isPublicAddress,
  OutboundClient,
  OutboundError,
  resolveAllowed,
} from '@herald/outbound';
import { makeCerts, type TestCerts } from '@herald/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

describe('the address policy', () => {
  it.each([
    ['127.0.0.1', 'loopback'],
    ['10.0.0.1', 'private'],
    ['172.16.0.1', 'private'],
    ['192.168.1.1', 'private'],
    ['169.254.169.254', 'linkLocal'],
    ['100.100.100.200', 'carrierGradeNat'],
    ['0.0.0.0', 'unspecified'],
    ['255.255.255.255', 'broadcast'],
    ['224.0.0.1', 'multicast'],
    ['::1', 'loopback'],
    ['::', 'unspecified'],
    ['fe80::1', 'linkLocal'],
    ['fd00:ec2::254', 'uniqueLocal'],
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:10.0.0.1', 'private'],
    ['::ffff:169.254.169.254', 'linkLocal'],
    ['64:ff9b::a00:1', 'rfc6052'],
    ['2002:a00:1::1', '6to4'],
  ])('refuses %s (%s)', (address, range) => {
    expect(addressRange(address)).toBe(range);
    expect(isPublicAddress(address)).toBe(false);
  });

  it.each(['93.184.215.14', '8.8.8.8', '2001:4860:4860::8888', '::ffff:8.8.8.8'])(
    'allows public unicast %s',
    (address) => {
      expect(isPublicAddress(address)).toBe(true);
    },
  );

  it('refuses a name when any address it resolves to is not public, unless allowPrivate', async () => {
    const resolver = async () => [
      { address: '93.184.215.14', family: 4 as const },
      { address: '10.1.2.3', family: 4 as const },
    ];
    await expect(resolveAllowed('mixed.test', { allowPrivate: false, resolver })).rejects.toThrow(
      ForbiddenAddressError,
    );
    await expect(
      resolveAllowed('mixed.test', { allowPrivate: true, resolver }),
    ).resolves.toHaveLength(2);
    await expect(resolveAllowed('[::1]', { allowPrivate: false })).rejects.toThrow(
      /::1 is a loopback address/,
    );
  });
});

describe('OutboundClient against a real HTTPS server', () => {
  let certs: TestCerts;
  let server: https.Server;
  let port = 0;
  const hits: string[] = [];
  beforeAll(async () => {
    certs = await makeCerts();
    server = https.createServer(
      { cert: readFileSync(certs.certFile), key: readFileSync(certs.keyFile) },
      (req, res) => {
        hits.push(req.url ?? '');
        req.resume();
        if (req.url === '/redirect') {
          res.writeHead(302, { location: '/target' });
          res.end();
        } else if (req.url === '/hang') {
          // Never answers.
        } else if (req.url === '/big') {
          res.writeHead(200);
          res.end(Buffer.alloc(1024 * 1024, 97));
        } else if (req.url === '/later') {
          res.writeHead(429, { 'retry-after': '30' });
          res.end();
        } else {
          res.writeHead(204);
          res.end();
        }
      },
    );
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise<void>((r) => server.close(() => r()));
  });

  const client = (allowPrivate: boolean) =>
    new OutboundClient({ allowPrivate, timeoutMs: 500, maxResponseBytes: 1024, ca: [certs.ca] });

  it('posts and answers the status; a 3xx is a status, never followed', async () => {
    const c = client(true);
    expect(await c.post(`https://localhost:${port}/ok`, {}, '{}')).toEqual({
      status: 204,
      retryAfter: undefined,
    });
    expect((await c.post(`https://localhost:${port}/redirect`, {}, '{}')).status).toBe(302);
    expect(hits).not.toContain('/target');
    expect(await c.post(`https://127.0.0.1:${port}/later`, {}, '{}')).toEqual({
      status: 429,
      retryAfter: '30',
    });
    // A large body is read up to the cap and dropped.
    expect((await c.post(`https://localhost:${port}/big`, {}, '{}')).status).toBe(200);
    c.close();
  });

  it('exchange answers the body too, read up to maxResponseBytes and no further', async () => {
    const c = client(true);
    const big = await c.exchange(`https://localhost:${port}/big`, {}, '{}');
    expect(big.status).toBe(200);
    expect(big.body).toBe('a'.repeat(1024));
    expect(await c.exchange(`https://localhost:${port}/later`, {}, '')).toEqual({
      status: 429,
      retryAfter: '30',
      body: '',
    });
    await expect(c.exchange('https://127.0.0.1:1/x', {}, '')).rejects.toMatchObject({
      kind: 'network',
    });
    const strict = client(false);
    await expect(strict.exchange(`https://127.0.0.1:${port}/big`, {}, '')).rejects.toMatchObject({
      kind: 'refused',
    });
    c.close();
    strict.close();
  });

  it('times out a request that gets no answer', async () => {
    const c = client(true);
    const err = await c.post(`https://localhost:${port}/hang`, {}, '{}').catch((e) => e);
    expect(err).toBeInstanceOf(OutboundError);
    expect(err.kind).toBe('timeout');
    c.close();
  });

  it('refuses loopback by literal and by name before connecting, without allowPrivate', async () => {
    const c = client(false);
    const before = hits.length;
    for (const url of [
      `https://127.0.0.1:${port}/x`,
      `https://localhost:${port}/x`,
      `https://[::1]:${port}/x`,
    ]) {
      const err = await c.post(url, {}, '{}').catch((e) => e);
      expect(err, url).toBeInstanceOf(OutboundError);
      expect(err.kind, url).toBe('refused');
      expect(err.message, url).toMatch(/loopback address/);
    }
    const http = await c.post(`http://93.184.215.14/x`, {}, '{}').catch((e) => e);
    expect(http.kind).toBe('refused');
    expect(hits.length).toBe(before);
    c.close();
  });

  it("refuses a certificate of a CA it was not given (Node's default trust here)", async () => {
    const c = new OutboundClient({ allowPrivate: true, timeoutMs: 500, maxResponseBytes: 1024 });
    const err = await c.post(`https://localhost:${port}/ok`, {}, '{}').catch((e) => e);
    expect(err.kind).toBe('network');
    expect(err.message).toMatch(/certificate/i);
    c.close();
  });

  it('refuses a certificate of another CA than the ones it was given', async () => {
    const other = await makeCerts();
    const c = new OutboundClient({
      allowPrivate: true,
      timeoutMs: 500,
      maxResponseBytes: 1024,
      ca: [other.ca],
    });
    const err = await c.post(`https://localhost:${port}/ok`, {}, '{}').catch((e) => e);
    expect(err.kind).toBe('network');
    expect(err.message).toMatch(/certificate/i);
    c.close();
  });
});
