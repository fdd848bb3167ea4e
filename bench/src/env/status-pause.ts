import { STATUS_STREAM } from '@herald/proto';
import type { JetStreamManager } from 'nats';
import type { NamedProcess } from './process-cpu.js';

/**
 * Takes Herald's status service out of a measurement window and puts it back (BENCH_STATUS_OFF):
 * the process is stopped with SIGSTOP, so its pid (and the CPU accounting by pid) stays; what
 * ingress and the edge publish to the status stream meanwhile is purged before it resumes, so it
 * has no backlog to catch up on in the next target's window. What stays in the window is what the
 * pipeline costs the other processes: building and publishing the records (ingress, edge) and
 * storing them (nats-server).
 */
export function statusPauser(
  processes: readonly NamedProcess[],
  jsm: Pick<JetStreamManager, 'streams'>,
): () => Promise<() => Promise<void>> {
  const status = processes.find((p) => p.name === 'status');
  if (!status) throw new Error('BENCH_STATUS_OFF: the Herald stack has no status process');
  return async () => {
    process.kill(status.pid, 'SIGSTOP');
    return async () => {
      try {
        await jsm.streams.purge(STATUS_STREAM);
      } finally {
        process.kill(status.pid, 'SIGCONT');
      }
    };
  };
}
