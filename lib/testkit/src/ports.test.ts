import { mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { natsServerBinary } from './nats-binary.js';
import { launchNats, stopProcess } from './nats-launch.js';
import { freePort, PortTakenError, retryOnPortTaken } from './ports.js';

describe('test ports', () => {
  it('never hands the same port out twice in a row', async () => {
    const ports = [];
    for (let i = 0; i < 300; i++) ports.push(await freePort());
    expect(new Set(ports).size).toBe(ports.length);
  });

  it('moves a launch to another port when its port is taken', async () => {
    const holder = net.createServer();
    await new Promise<void>((r) => holder.listen(0, '127.0.0.1', r));
    const taken = (holder.address() as net.AddressInfo).port;
    const tried: number[] = [];
    const bound = await retryOnPortTaken(async (port) => {
      tried.push(port);
      if (port === taken) throw new PortTakenError(port);
      return port;
    }, taken);
    holder.close();
    expect(tried[0]).toBe(taken);
    expect(bound).not.toBe(taken);
    expect(tried).toHaveLength(2);
  });

  it('reports a nats-server that lost its fixed port as PortTakenError, and reads a picked port', async () => {
    const { bin } = await natsServerBinary();
    const dir = mkdtempSync(join(tmpdir(), 'herald-ports-'));
    try {
      const first = await launchNats(bin as string, [], { portsDir: dir });
      expect(first.port).toBeGreaterThan(0);
      await expect(
        launchNats(bin as string, [], { portsDir: dir, port: first.port }),
      ).rejects.toBeInstanceOf(PortTakenError);
      await stopProcess(first.proc);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
