import type { ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import net from 'node:net';

/**
 * Ports this process handed out lately. The OS may return a port that was just released to the
 * next bind(0), so two calls in a row can yield the same number; a stack that asks for four ports
 * must get four different ones (a service that answered on another's port fooled a readiness
 * check once, in CI).
 */
const handedOut: number[] = [];
const REMEMBERED = 512;

/**
 * A TCP port free on 127.0.0.1 right now, never one this process handed out recently. Another
 * process may still take it before it is bound: launchers that can see a failed bind retry on a
 * new port (see {@link retryOnPortTaken}).
 */
export async function freePort(): Promise<number> {
  for (let attempt = 0; ; attempt++) {
    const port = await osPort();
    if (!handedOut.includes(port) || attempt > 50) {
      handedOut.push(port);
      if (handedOut.length > REMEMBERED) handedOut.shift();
      return port;
    }
  }
}

function osPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as net.AddressInfo;
      srv.close(() => resolve(port));
    });
  });
}

/** Thrown by a launcher whose server could not bind its port because another process holds it. */
export class PortTakenError extends Error {
  constructor(port: number, detail = '') {
    super(`port ${port} was taken by another process before the server bound it${detail}`);
  }
}

/**
 * Runs `launch` on `first` (default a fresh free port), then on another free port each time it
 * throws PortTakenError.
 */
export async function retryOnPortTaken<T>(
  launch: (port: number) => Promise<T>,
  first?: number,
  attempts = 5,
): Promise<T> {
  for (let i = 1; ; i++) {
    try {
      return await launch(i === 1 && first !== undefined ? first : await freePort());
    } catch (err) {
      if (!(err instanceof PortTakenError) || i >= attempts) throw err;
    }
  }
}

/**
 * Resolves with `read()`'s first non-undefined result, polled every 25 ms; rejects once `proc`
 * exits first (with `onExit()`'s error) or after timeoutMs.
 */
export async function waitFor<T>(
  proc: ChildProcess,
  read: () => T | undefined,
  onExit: () => Error,
  timeoutMs = 20_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = read();
    if (value !== undefined) return value;
    if (proc.exitCode !== null || proc.signalCode !== null) throw onExit();
    if (Date.now() > deadline) throw new Error(`not ready after ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** The text of a file, or undefined while it does not exist yet. */
export function readIfExists(path: string): string | undefined {
  return existsSync(path) ? readFileSync(path, 'utf8') : undefined;
}

/** Resolves once something accepts TCP connections on host:port, or rejects after timeoutMs. */
export async function waitForPort(
  port: number,
  timeoutMs = 20_000,
  host = '127.0.0.1',
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const ok = await new Promise<boolean>((resolve) => {
      const s = net.connect(port, host);
      s.once('connect', () => {
        s.destroy();
        resolve(true);
      });
      s.once('error', () => resolve(false));
    });
    if (ok) return;
    if (Date.now() > deadline)
      throw new Error(`nothing listening on ${host}:${port} after ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
