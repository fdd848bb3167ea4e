import { readdir, readFile } from 'node:fs/promises';

/** Clock ticks per second of /proc/<pid>/stat times (USER_HZ, 100 on Linux). */
const TICKS_PER_SEC = 100;

export interface NamedProcess {
  name: string;
  pid: number;
  /**
   * Charge its descendants too (Postgres: the postmaster forks a backend per connection, where
   * the work is done). Default false.
   */
  tree?: boolean;
}

/**
 * CPU seconds (user + system, every thread) a process has used so far, from /proc/<pid>/stat;
 * NaN when it cannot be read. Sampled around a figure, it shows where the server core's time went
 * (ingress, edge, nats-server or a baseline), which tells what limits a figure.
 */
export async function cpuSeconds(pid: number): Promise<number> {
  try {
    return parseStatCpu(await readFile(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return Number.NaN;
  }
}

export function parseStatCpu(stat: string): number {
  // The command name (field 2) may hold spaces and parentheses: fields are counted after its ')'.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // utime and stime are fields 14 and 15 of the whole line, 12 and 13 after the name.
  return (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SEC;
}

/** The fields of /proc/<pid>/stat the bench reads. */
export function parseStat(stat: string): { ppid: number; own: number; reaped: number } {
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return {
    ppid: Number(f[1]),
    own: (Number(f[11]) + Number(f[12])) / TICKS_PER_SEC,
    // cutime and cstime: what its children used, once they exited and were waited for.
    reaped: (Number(f[13]) + Number(f[14])) / TICKS_PER_SEC,
  };
}

/**
 * CPU seconds of a process and every descendant, live or exited: each one's own time plus what
 * its exited children left in it. NaN when the root is gone.
 */
export async function treeCpuSeconds(root: number): Promise<number> {
  const stats = new Map<number, ReturnType<typeof parseStat>>();
  const pids = (await readdir('/proc')).filter((e) => /^\d+$/.test(e)).map(Number);
  await Promise.all(
    pids.map(async (pid) => {
      try {
        stats.set(pid, parseStat(await readFile(`/proc/${pid}/stat`, 'utf8')));
      } catch {
        // Exited between the listing and the read.
      }
    }),
  );
  if (!stats.has(root)) return Number.NaN;
  const children = new Map<number, number[]>();
  for (const [pid, st] of stats) {
    const list = children.get(st.ppid) ?? [];
    list.push(pid);
    children.set(st.ppid, list);
  }
  let total = 0;
  const queue = [root];
  while (queue.length > 0) {
    const pid = queue.pop() as number;
    const st = stats.get(pid);
    if (!st) continue;
    total += st.own + st.reaped;
    queue.push(...(children.get(pid) ?? []));
  }
  return total;
}

/** CPU seconds of each process (with its descendants where `tree`), read at once. */
export async function cpuSnapshot(processes: NamedProcess[]): Promise<Map<string, number>> {
  const values = await Promise.all(
    processes.map((p) => (p.tree ? treeCpuSeconds(p.pid) : cpuSeconds(p.pid))),
  );
  return new Map(processes.map((p, i) => [p.name, values[i] as number]));
}

/** A process's resident memory, bytes (/proc/<pid>/status VmRSS); NaN when it cannot be read. */
export async function rssBytes(pid: number): Promise<number> {
  try {
    const kb = /^VmRSS:\s+(\d+) kB/m.exec(await readFile(`/proc/${pid}/status`, 'utf8'))?.[1];
    return kb === undefined ? Number.NaN : Number(kb) * 1024;
  } catch {
    return Number.NaN;
  }
}
