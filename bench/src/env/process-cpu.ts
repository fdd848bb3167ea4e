import { readFile } from 'node:fs/promises';

/** Clock ticks per second of /proc/<pid>/stat times (USER_HZ, 100 on Linux). */
const TICKS_PER_SEC = 100;

export interface NamedProcess {
  name: string;
  pid: number;
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

/** CPU seconds of each process, read at once. */
export async function cpuSnapshot(processes: NamedProcess[]): Promise<Map<string, number>> {
  const values = await Promise.all(processes.map((p) => cpuSeconds(p.pid)));
  return new Map(processes.map((p, i) => [p.name, values[i] as number]));
}
