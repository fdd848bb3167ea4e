import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { promisify } from 'node:util';

const execFileAsync = promisify(execFile);

/**
 * Kernel memory of a server's connections, server end only: the socket buffers `ss -m` reports
 * for its established sockets, plus the kernel objects every TCP socket costs whoever holds it
 * (struct tcp_sock, its inode, file and epoll entry, from /proc/slabinfo object sizes).
 */
export interface KernelSocketMemory {
  connections: number;
  bufferBytes: number;
  /** Slab bytes per socket; NaN when /proc/slabinfo is unreadable. */
  objectBytesPerSocket: number;
}

export async function kernelSocketMemory(port: number): Promise<KernelSocketMemory> {
  const { stdout } = await execFileAsync(
    'ss',
    ['-Htmn', 'state', 'established', `( sport = :${port} )`],
    { maxBuffer: 256 * 1024 * 1024 },
  );
  const buffers = parseSkmem(stdout);
  return { ...buffers, objectBytesPerSocket: await socketObjectBytes() };
}

/** Sums the byte fields of every `skmem:(…)` of `ss -m` output and counts the sockets. */
export function parseSkmem(output: string): { connections: number; bufferBytes: number } {
  let connections = 0;
  let bufferBytes = 0;
  for (const m of output.matchAll(/skmem:\(([^)]*)\)/g)) {
    connections++;
    for (const field of (m[1] ?? '').split(',')) {
      // r: receive queue, t: transmit, f: forward-allocated, w: queued writes, o: options, bl: backlog.
      const f = /^(r|t|f|w|o|bl)(\d+)$/.exec(field);
      if (f?.[2]) bufferBytes += Number(f[2]);
    }
  }
  return { connections, bufferBytes };
}

const SOCKET_CACHES = ['TCP', 'sock_inode_cache', 'filp', 'dentry', 'eventpoll_epi'];

/** Sum of the object sizes one TCP socket takes in the kernel's slab caches. */
export function parseSlabObjectBytes(slabinfo: string): number {
  let total = 0;
  let found = 0;
  for (const line of slabinfo.split('\n')) {
    const [name, , , objsize] = line.split(/\s+/);
    if (name && SOCKET_CACHES.includes(name) && objsize) {
      total += Number(objsize);
      found++;
    }
  }
  return found === SOCKET_CACHES.length ? total : Number.NaN;
}

async function socketObjectBytes(): Promise<number> {
  try {
    return parseSlabObjectBytes(await readFile('/proc/slabinfo', 'utf8'));
  } catch {
    return Number.NaN;
  }
}
