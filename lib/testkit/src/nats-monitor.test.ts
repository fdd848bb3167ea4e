import { describe, expect, it } from 'vitest';
import { eventually } from './eventually.js';
import { startNatsServer } from './nats-server.js';

/** A GET of the monitoring endpoint's JSON, or undefined while it does not answer. */
async function varz(url: string): Promise<{ mem?: number } | undefined> {
  try {
    return (await (await fetch(`${url}/varz`)).json()) as { mem?: number };
  } catch {
    return undefined;
  }
}

describe('startNatsServer({ monitor: true })', () => {
  it('serves /varz on the port it names, and keeps that port across a restart with a new pid', async () => {
    const nats = await startNatsServer({ monitor: true });
    try {
      const url = nats.monitorUrl as string;
      expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      expect((await varz(url))?.mem).toBeGreaterThan(0);
      const before = nats.pid?.();
      expect(before).toBeGreaterThan(0);
      await nats.restart();
      expect(nats.pid?.()).not.toBe(before);
      await eventually(async () => ((await varz(url))?.mem ?? 0) > 0, '/varz after the restart');
    } finally {
      await nats.stop();
    }
  });

  it('has no monitoring port unless asked', async () => {
    const nats = await startNatsServer();
    try {
      expect(nats.monitorUrl).toBeUndefined();
    } finally {
      await nats.stop();
    }
  });
});
