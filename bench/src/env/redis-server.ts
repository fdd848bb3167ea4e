import { mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, which } from '@herald/testkit';
import { type NodeProcess, startServerProcess } from './node-process.js';
import type { Pinning } from './pinning.js';

export interface RedisServer {
  process: NodeProcess;
  /** redis://127.0.0.1:port */
  url: string;
  stop(): Promise<void>;
}

/**
 * A redis-server of the bench's own for Centrifugo's Redis engine: loopback only, a free port
 * (never the machine's 6379), pinned to the server CPUs, persisting as a production Redis engine
 * would (AOF, fsync every second), into a throwaway directory removed on stop.
 */
export async function startRedis(opts: { pinning: Pinning }): Promise<RedisServer> {
  const bin = await which('redis-server');
  if (!bin)
    throw new Error(
      'redis-server is not installed: run `make deps-bench` (Debian package redis-server)',
    );
  const dir = mkdtempSync(join(tmpdir(), 'bench-redis-'));
  const port = await freePort();
  try {
    const proc = await startServerProcess({
      name: 'redis-server',
      argv: [
        ...opts.pinning.serverPrefix(),
        bin,
        '--bind',
        '127.0.0.1',
        '--port',
        String(port),
        '--dir',
        dir,
        '--save',
        '',
        '--appendonly',
        'yes',
        '--appendfsync',
        'everysec',
        '--protected-mode',
        'yes',
        '--loglevel',
        'warning',
      ],
      port,
      env: {},
      ready: { check: () => redisPing(port) },
      readyTimeoutMs: 20_000,
    });
    return {
      process: proc,
      url: `redis://127.0.0.1:${port}`,
      stop: async () => {
        await proc.stop();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  } catch (err) {
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
}

/** True when a Redis on the port answers PING with PONG. */
export function redisPing(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = net.connect(port, '127.0.0.1');
    let got = '';
    const done = (ok: boolean) => {
      s.destroy();
      resolve(ok);
    };
    s.setTimeout(2000, () => done(false));
    s.once('error', () => done(false));
    s.once('connect', () => s.write('PING\r\n'));
    s.on('data', (d) => {
      got += d.toString('latin1');
      if (got.includes('\r\n')) done(got.startsWith('+PONG'));
    });
  });
}
