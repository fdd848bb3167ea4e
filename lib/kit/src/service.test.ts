import type http from 'node:http';
import { describe, expect, it } from 'vitest';
import { CommonEnv } from './config.js';
import { type Service, serve } from './service.js';

const config = {
  ...CommonEnv.parse({ TLS_DISABLED: 'true' }),
  PORT: 0,
  HOST: '127.0.0.1',
  OPS_HOST: '127.0.0.1',
  OPS_PORT: 0,
};

/** A service whose requests wait until `release` is called, recording its life's steps. */
function slowService() {
  const steps: string[] = [];
  let release = () => {};
  const released = new Promise<void>((resolve) => {
    release = resolve;
  });
  const service: Service = {
    handler: (_req, res) => {
      steps.push('request');
      void released.then(() => res.end('done'));
    },
    opsHandler: (req, res) => {
      if (req.url !== '/healthz') return false;
      res.end('ok');
      return true;
    },
    start: async () => {
      steps.push('start');
    },
    attach: (server: http.Server) => {
      steps.push(`attach ${server.listening ? 'listening' : 'not listening'}`);
    },
    close: async (drained) => {
      steps.push('close');
      await drained;
      steps.push('drained');
    },
  };
  return { service, steps, release };
}

describe('serve', () => {
  it('starts, attaches, then listens on both listeners', async () => {
    const { service, steps, release } = slowService();
    const serving = await serve(service, config);
    expect(steps).toEqual(['start', 'attach not listening']);
    expect(serving.port).toBeGreaterThan(0);
    const ops = await fetch(`http://127.0.0.1:${serving.opsPort}/healthz`);
    expect(await ops.text()).toBe('ok');
    release();
    await serving.close();
  });

  it('closes the service once the listener refuses new connects, and ends after the requests in flight', async () => {
    const { service, steps, release } = slowService();
    const serving = await serve(service, config);
    const base = `http://127.0.0.1:${serving.port}`;
    const inFlight = fetch(base).then((r) => r.text());
    while (!steps.includes('request')) await new Promise((r) => setTimeout(r, 5));
    const closed = serving.close();
    await new Promise((r) => setTimeout(r, 20));
    // The service heard close, and waits for the request in flight, which is still being served.
    expect(steps.at(-1)).toBe('close');
    await expect(fetch(base)).rejects.toThrow();
    release();
    expect(await inFlight).toBe('done');
    await closed;
    expect(steps.at(-1)).toBe('drained');
    expect(serving.close()).toBe(closed);
  });

  it('fails without listening when start fails', async () => {
    const { service } = slowService();
    const failing: Service = {
      ...service,
      start: async () => {
        throw new Error('no JetStream');
      },
    };
    await expect(serve(failing, config)).rejects.toThrow('no JetStream');
  });
});
