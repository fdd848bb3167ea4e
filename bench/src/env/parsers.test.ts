import { describe, expect, it } from 'vitest';
import { openFilesLimit } from './fd-limit.js';
import { parseSkmem, parseSlabObjectBytes } from './kernel-socket-memory.js';
import { parsePidFromSs } from './pinning.js';
import { parseStat, parseStatCpu, treeCpuSeconds } from './process-cpu.js';

describe('parseSkmem', () => {
  it('counts sockets and sums their buffer bytes, not their limits or drop counts', () => {
    const out = [
      '0 0 127.0.0.1:8444 127.0.0.2:40000',
      '\t skmem:(r0,rb131072,t0,tb2626560,f4096,w0,o0,bl0,d0)',
      '0 0 127.0.0.1:8444 127.0.0.3:40001',
      '\t skmem:(r512,rb131072,t256,tb2626560,f0,w1024,o8,bl16,d3)',
    ].join('\n');
    expect(parseSkmem(out)).toEqual({
      connections: 2,
      bufferBytes: 4096 + 512 + 256 + 1024 + 8 + 16,
    });
  });

  it('is zero for no sockets', () => {
    expect(parseSkmem('')).toEqual({ connections: 0, bufferBytes: 0 });
  });
});

describe('parseSlabObjectBytes', () => {
  const line = (name: string, size: number) =>
    `${name}  10  20  ${size}  13  8 : tunables 0 0 0 : slabdata 1 1 0`;

  it('sums the object sizes of the caches a TCP socket takes', () => {
    const info = [
      'slabinfo - version: 2.1',
      line('TCP', 2368),
      line('sock_inode_cache', 832),
      line('filp', 192),
      line('dentry', 192),
      line('eventpoll_epi', 128),
      line('kmalloc-1k', 1024),
    ].join('\n');
    expect(parseSlabObjectBytes(info)).toBe(2368 + 832 + 192 + 192 + 128);
  });

  it('is NaN when a cache is missing, rather than an undercount', () => {
    expect(parseSlabObjectBytes(line('TCP', 2368))).toBeNaN();
  });
});

describe('openFilesLimit', () => {
  it('reads the soft limit from /proc/self/limits', () => {
    const limits =
      'Limit                     Soft Limit           Hard Limit           Units\nMax open files            20000                20000                files\n';
    expect(openFilesLimit(limits)).toBe(20_000);
  });

  it('is undefined when unlimited or unknown', () => {
    expect(
      openFilesLimit('Max open files            unlimited            unlimited            files'),
    ).toBeUndefined();
    expect(openFilesLimit('')).toBeUndefined();
  });
});

describe('parsePidFromSs', () => {
  it('takes the pid of the listening process', () => {
    expect(
      parsePidFromSs(
        'LISTEN 0 511 127.0.0.1:41234 0.0.0.0:* users:(("nats-server",pid=4321,fd=5))',
      ),
    ).toBe(4321);
    expect(parsePidFromSs('')).toBeUndefined();
  });
});

describe('parseStatCpu', () => {
  it('adds utime and stime, counting fields after a command name that holds spaces', () => {
    const stat =
      '4321 (node (main) x) S 1 4321 4321 0 -1 4194304 1000 0 0 0 250 50 0 0 20 0 11 0 100 1000000 5000';
    expect(parseStatCpu(stat)).toBe(3);
  });
});

describe('parseStat', () => {
  it('reads the parent, its own time and what its exited children left in it', () => {
    const stat =
      '4321 (postgres: x) S 77 4321 4321 0 -1 4194304 1000 0 0 0 250 50 120 30 20 0 11 0 100 1000000 5000';
    expect(parseStat(stat)).toEqual({ ppid: 77, own: 3, reaped: 1.5 });
  });
});

describe('treeCpuSeconds', () => {
  it("charges a process for the CPU its children burn (Postgres's backends)", async () => {
    const { spawn } = await import('node:child_process');
    const { readFileSync } = await import('node:fs');
    // A parent that idles while its child spins (for at most 3 s): its own time stays near zero.
    const spin = 'const end = Date.now() + 3000; while (Date.now() < end);';
    const parent = spawn('sh', ['-c', `"${process.execPath}" -e "${spin}" & wait`], {
      stdio: 'ignore',
      detached: true,
    });
    try {
      await new Promise((r) => setTimeout(r, 1500));
      const tree = await treeCpuSeconds(parent.pid as number);
      const own = parseStat(readFileSync(`/proc/${parent.pid}/stat`, 'utf8')).own;
      expect(tree).toBeGreaterThan(own + 0.1);
    } finally {
      process.kill(-(parent.pid as number), 'SIGKILL');
    }
    expect(await treeCpuSeconds(2 ** 22 + 1)).toBeNaN();
  });
});
