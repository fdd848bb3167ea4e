import { type ChildProcess, type SpawnOptions, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';

/**
 * The kit's servers die with the process that started them (issue 45: a measure script that died
 * on an uncaught error left its nats-server running). Two layers:
 * - on Linux with util-linux's `setpriv`, the child is exec'd with a parent-death signal, so the
 *   kernel signals it whatever way its parent ends (an uncaught error, SIGTERM, even SIGKILL);
 *   `setpriv` execs in place, so the child's pid is the server's;
 * - everywhere, every child still running when this process exits is killed from its `exit` hook
 *   (which runs after an uncaught error, not after a signal).
 */

/** util-linux's setpriv, where it is installed. */
const SETPRIV = ['/usr/bin/setpriv', '/bin/setpriv'].find(
  (p) => process.platform === 'linux' && existsSync(p),
);

const alive = new Set<ChildProcess>();
let hooked = false;

/** Whether children get a parent-death signal here (Linux with setpriv). */
export const PARENT_DEATH_SIGNAL = SETPRIV !== undefined;

export interface TiedOptions extends SpawnOptions {
  /** The signal the child gets when this process dies (postgres: SIGQUIT, its immediate stop). */
  deathSignal?: 'SIGKILL' | 'SIGTERM' | 'SIGQUIT';
  /** Run as this uid/gid (postgres under root): setpriv drops to it, in place of `runuser`. */
  runAs?: { uid: number; gid: number };
}

/** `spawn`, with the child tied to this process's life (above). */
export function spawnTied(cmd: string, args: string[], opts: TiedOptions = {}): ChildProcess {
  const { deathSignal = 'SIGKILL', runAs, ...spawnOpts } = opts;
  let proc: ChildProcess;
  if (SETPRIV) {
    const user = runAs ? [`--reuid=${runAs.uid}`, `--regid=${runAs.gid}`, '--init-groups'] : [];
    const signal = deathSignal.replace(/^SIG/, '');
    proc = spawn(SETPRIV, [...user, '--pdeathsig', signal, '--', cmd, ...args], spawnOpts);
  } else if (runAs) {
    proc = spawn('runuser', ['-u', String(runAs.uid), '--', cmd, ...args], spawnOpts);
  } else {
    proc = spawn(cmd, args, spawnOpts);
  }
  alive.add(proc);
  proc.once('exit', () => alive.delete(proc));
  if (!hooked) {
    hooked = true;
    process.once('exit', () => {
      for (const child of alive) child.kill('SIGKILL');
    });
  }
  return proc;
}
