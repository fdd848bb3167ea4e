import { spawn } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { eventually, PARENT_DEATH_SIGNAL } from '@herald/testkit';
import { describe, expect, it } from 'vitest';

const CHILD = join(dirname(fileURLToPath(import.meta.url)), 'node-process-child.ts');

/** Whether the process `pid` still runs. */
function running(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/**
 * A bench stopped by a signal left the servers it measured running (ingress-api and socket-edge
 * were found orphaned after a bench was stopped with SIGTERM): they are tied to its life now.
 */
describe("the bench's servers", () => {
  it.runIf(PARENT_DEATH_SIGNAL)(
    'die with a bench stopped by SIGTERM',
    async () => {
      const bench = spawn(
        process.execPath,
        ['--conditions=herald-source', '--import', 'tsx', CHILD],
        { stdio: ['ignore', 'pipe', 'pipe'] },
      );
      let out = '';
      let err = '';
      bench.stderr.on('data', (c: Buffer) => (err += c.toString('utf8')));
      const started = new Promise<{ pid: number; port: number }>((resolve, reject) => {
        bench.stdout.on('data', (c: Buffer) => {
          out += c.toString('utf8');
          if (out.includes('\n')) resolve(JSON.parse(out.split('\n')[0] ?? ''));
        });
        bench.once('exit', () => reject(new Error(`the script exited first: ${err}`)));
      });
      const exited = new Promise<void>((resolve) => bench.once('exit', () => resolve()));
      const { pid } = await started;
      expect(running(pid)).toBe(true);
      bench.kill('SIGTERM');
      await exited;
      await eventually(async () => !running(pid), "the stopped bench's server exits");
    },
    60_000,
  );
});
