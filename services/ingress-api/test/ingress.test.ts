import { spawn } from 'node:child_process';
import { createLogger, type Serving, serve } from '@herald/kit';
import { DispatchStatus, subjects } from '@herald/proto';
import {
  makeCerts,
  type NatsServer,
  REPO_ROOT,
  startNatsServer,
  type TestCerts,
} from '@herald/testkit';
import { connect, type NatsConnection } from 'nats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createIngress, loadConfig } from '../src/index.js';
import { ACCOUNT_A, startAuthResponder } from './support/auth-responder.js';
import { edgeStandIn, newRecipient, notifyBody } from './support/fixture.js';
import { request } from './support/http.js';

let nats: NatsServer;
let certs: TestCerts;
let peer: NatsConnection;

beforeAll(async () => {
  [nats, certs] = await Promise.all([startNatsServer(), makeCerts()]);
  peer = await connect(nats.connectOptions());
  startAuthResponder(peer);
});
afterAll(async () => {
  await peer?.close();
  await nats?.stop();
});

async function startTlsIngress(): Promise<{
  serving: Serving;
  nc: NatsConnection;
  baseUrl: string;
}> {
  const nc = await connect(nats.connectOptions());
  const config = loadConfig({
    ...nats.env('ingress-api'),
    HOST: '127.0.0.1',
    TLS_CERT_FILE: certs.certFile,
    TLS_KEY_FILE: certs.keyFile,
    OPS_PORT: '0',
    LOG_LEVEL: 'silent',
  });
  const ingress = createIngress(config, { nc, logger: createLogger('ingress-api', 'silent') });
  const serving = await serve(ingress, config, 0);
  return { serving, nc, baseUrl: `https://127.0.0.1:${serving.port}` };
}

describe('createIngress', () => {
  it('serves dispatch, /healthz and /readyz over TLS, and /metrics only on the loopback ops listener', async () => {
    const { serving, nc, baseUrl } = await startTlsIngress();
    try {
      const res = await request(baseUrl, { body: notifyBody(newRecipient()), ca: certs.ca });
      expect(res.status).toBe(202);
      expect(res.json.status).toBe(DispatchStatus.queued);

      const health = await request(baseUrl, { method: 'GET', path: '/healthz', ca: certs.ca });
      expect(health.status).toBe(200);
      const ready = await request(baseUrl, { method: 'GET', path: '/readyz', ca: certs.ca });
      expect(ready.status).toBe(200);
      // The public port says whether it is ready, not what it depends on.
      expect(ready.json).toEqual({ status: 'ready' });
      const publicMetrics = await request(baseUrl, {
        method: 'GET',
        path: '/metrics',
        ca: certs.ca,
      });
      expect(publicMetrics.status).toBe(404);
      expect(publicMetrics.json.error.code).toBe('not_found');

      const ops = `http://127.0.0.1:${serving.opsPort}`;
      const opsReady = await request(ops, { method: 'GET', path: '/readyz' });
      expect(opsReady.json.checks).toEqual({ nats: true, queue_stream: true });

      const refused = await request(baseUrl, { body: notifyBody('nope'), ca: certs.ca });
      expect(refused.status).toBe(400);
      const metrics = await request(ops, { method: 'GET', path: '/metrics' });
      expect(metrics.status).toBe(200);
      expect(metrics.text).toMatch(
        /herald_dispatch_total\{[^}]*transport="http"[^}]*outcome="queued"[^}]*\} 1/,
      );
      expect(metrics.text).toMatch(
        /herald_dispatch_refused_total\{[^}]*code="invalid_recipient"[^}]*\} 1/,
      );
      expect(metrics.text).toMatch(/herald_queue_publish_total\{[^}]*result="stored"[^}]*\} 1/);
      expect(metrics.text).toContain('herald_dispatch_duration_seconds_bucket');
    } finally {
      await serving.close();
      await nc.close();
    }
  });

  it('close() lets an in-flight dispatch finish, then stops serving HTTP and NATS dispatches', async () => {
    const { serving, nc, baseUrl } = await startTlsIngress();
    const recipient = newRecipient();
    const edge = edgeStandIn(peer, recipient, { delayMs: 300 });
    await peer.flush();
    const inFlight = request(baseUrl, { body: notifyBody(recipient), ca: certs.ca });
    // Wait until the edge holds the request, so close() starts while the dispatch is in flight.
    while (edge.received.length === 0) await new Promise((r) => setTimeout(r, 10));
    await serving.close();
    const res = await inFlight;
    edge.stop();
    expect(res.status).toBe(200);
    await expect(request(baseUrl, { body: notifyBody(recipient), ca: certs.ca })).rejects.toThrow(
      /ECONNREFUSED/,
    );
    await expect(
      peer.request(subjects.dispatch(ACCOUNT_A), '{}', { timeout: 1000 }),
    ).rejects.toMatchObject({ code: '503' });
    await nc.close();
  });
});

describe('main.ts', () => {
  it('logs one "listening" line with the port, and exits 0 on SIGTERM', async () => {
    const proc = spawn(
      process.execPath,
      ['--conditions=herald-source', '--import', 'tsx', 'services/ingress-api/src/main.ts'],
      {
        cwd: REPO_ROOT,
        env: {
          PATH: process.env.PATH ?? '',
          ...nats.env('ingress-api'),
          PORT: '0',
          HOST: '127.0.0.1',
          TLS_DISABLED: 'true',
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    const lines: Array<Record<string, unknown>> = [];
    let buffered = '';
    const listening = new Promise<Record<string, unknown>>((resolve, reject) => {
      proc.stdout.on('data', (chunk: Buffer) => {
        buffered += chunk.toString('utf8');
        const parts = buffered.split('\n');
        buffered = parts.pop() ?? '';
        for (const part of parts) {
          const line = JSON.parse(part) as Record<string, unknown>;
          lines.push(line);
          if (line.msg === 'listening') resolve(line);
        }
      });
      proc.once('exit', (code) => reject(new Error(`exited early with ${code}`)));
    });
    const line = await listening;
    expect(line.port).toEqual(expect.any(Number));
    const health = await request(`http://127.0.0.1:${line.port}`, {
      method: 'GET',
      path: '/healthz',
    });
    expect(health.status).toBe(200);
    const exited = new Promise<number | null>((resolve) => proc.once('exit', resolve));
    proc.kill('SIGTERM');
    expect(await exited).toBe(0);
    expect(lines.filter((l) => l.msg === 'listening')).toHaveLength(1);
  });

  it('exits 1 naming every bad variable', async () => {
    const proc = spawn(
      process.execPath,
      ['--conditions=herald-source', '--import', 'tsx', 'services/ingress-api/src/main.ts'],
      {
        cwd: REPO_ROOT,
        env: { PATH: process.env.PATH ?? '', PAYLOAD_LIMIT_BYTES: '0', LIVE_TIMEOUT_MS: 'soon' },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let stderr = '';
    proc.stderr.on('data', (c: Buffer) => {
      stderr += c.toString('utf8');
    });
    const code = await new Promise<number | null>((resolve) => proc.once('exit', resolve));
    expect(code).toBe(1);
    expect(stderr).toContain('PAYLOAD_LIMIT_BYTES');
    expect(stderr).toContain('LIVE_TIMEOUT_MS');
    expect(stderr).toContain('TLS_CERT_FILE');
  });
});
