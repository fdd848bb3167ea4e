import { readdirSync, readFileSync } from 'node:fs';

/**
 * CPU time (user + system, ms) of this process's children named `name` (as /proc shows it, e.g.
 * `nats-server`), from /proc; 0 where there is no /proc. For measurement scripts that start their
 * own servers through the testkit and want each server's share of the work.
 */
export function childCpuMs(name: string): number {
  let ticks = 0;
  for (const pid of readdirSync('/proc').filter((p) => /^\d+$/.test(p))) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      // After the name: state, ppid, …; utime and stime are the 14th and 15th fields of the line.
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (!stat.includes(`(${name})`) || Number(fields[1]) !== process.pid) continue;
      ticks += Number(fields[11]) + Number(fields[12]);
    } catch {
      // The process ended while listing.
    }
  }
  // USER_HZ is 100 on Linux: one tick is 10 ms.
  return ticks * 10;
}
