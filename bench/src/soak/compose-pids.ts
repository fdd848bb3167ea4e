import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

const execFileAsync = promisify(execFile);

/**
 * `docker inspect`'s template for a compose container: its service and its main process's pid
 * on this host (0 when it is not running).
 */
export const INSPECT_FORMAT =
  '{{index .Config.Labels "com.docker.compose.service"}} {{.State.Pid}}';

/**
 * The output of `docker inspect --format INSPECT_FORMAT …`, one container a line: each service's
 * running pid. A stopped container (pid 0) and a malformed line are left out; a service listed
 * twice (an old container beside its replacement) keeps its running one.
 */
export function parseServicePids(text: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const line of text.split('\n')) {
    const m = /^(\S+) (\d+)$/.exec(line.trim());
    const pid = Number(m?.[2]);
    if (m?.[1] && pid > 0) out.set(m[1], pid);
  }
  return out;
}

/**
 * The pids of a compose project's containers, as this host's root sees them (the sampler reads
 * their /proc): asked of the engine at most once per `maxAgeMs`, as a restart changes a pid.
 */
export function servicePids(project: string, maxAgeMs = 5000) {
  let at = 0;
  let last = new Map<string, number>();
  const ask = async () => {
    const ids = await execFileAsync('docker', [
      'ps',
      '-q',
      '--filter',
      `label=com.docker.compose.project=${project}`,
    ]);
    const list = ids.stdout.split(/\s+/).filter(Boolean);
    if (list.length === 0) return new Map<string, number>();
    const res = await execFileAsync('docker', ['inspect', '--format', INSPECT_FORMAT, ...list]);
    return parseServicePids(res.stdout);
  };
  return async (service: string): Promise<number | undefined> => {
    if (Date.now() - at > maxAgeMs) {
      // A failed ask (a container gone between ps and inspect) is asked again next time.
      last = await ask().catch(() => new Map<string, number>());
      at = last.size > 0 ? Date.now() : 0;
    }
    return last.get(service);
  };
}
