import { spawn } from 'node:child_process';
import { connect } from 'node:net';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { eventually } from './eventually.js';
import { PARENT_DEATH_SIGNAL } from './tied-spawn.js';

const CHILD = join(dirname(fileURLToPath(import.meta.url)), 'tied-spawn-child.ts');

/** Whether something still accepts connections on 127.0.0.1:port. */
function listening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = connect({ host: '127.0.0.1', port });
    s.once('connect', () => {
      s.destroy();
      resolve(true);
    });
    s.once('error', () => resolve(false));
  });
}

/** Runs the child script in `mode`; resolves with its servers' ports once it printed them. */
function runChild(mode: 'throw' | 'wait') {
  const proc = spawn(
    process.execPath,
    ['--conditions=herald-source', '--import', 'tsx', CHILD, mode],
    {
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let out = '';
  let err = '';
  proc.stderr.on('data', (c: Buffer) => (err += c.toString('utf8')));
  const ports = new Promise<{ natsPort: number; pgPort: number }>((resolve, reject) => {
    proc.stdout.on('data', (c: Buffer) => {
      out += c.toString('utf8');
      if (out.includes('\n')) resolve(JSON.parse(out.split('\n')[0] ?? ''));
    });
    proc.once('exit', () => reject(new Error(`the script exited first: ${err}`)));
  });
  const exited = new Promise<number | null>((resolve) =>
    proc.once('exit', (code) => resolve(code)),
  );
  return { proc, ports, exited, stderr: () => err };
}

/** The kit's servers die with the process that started them (issue 45). */
describe('servers tied to the process that started them', () => {
  it('a script dying on an uncaught error takes its nats-server and Postgres with it', async () => {
    const child = runChild('throw');
    const { natsPort, pgPort } = await child.ports;
    expect(await child.exited).toBe(1);
    expect(child.stderr()).toContain('a measure script failing');
    await eventually(
      async () => !(await listening(natsPort)) && !(await listening(pgPort)),
      'the servers of the dead script stop listening',
    );
  }, 60_000);

  it.runIf(PARENT_DEATH_SIGNAL)(
    'and so does one killed with SIGKILL (Linux: a parent-death signal)',
    async () => {
      const child = runChild('wait');
      const { natsPort, pgPort } = await child.ports;
      expect(await listening(natsPort)).toBe(true);
      child.proc.kill('SIGKILL');
      await child.exited;
      await eventually(
        async () => !(await listening(natsPort)) && !(await listening(pgPort)),
        'the servers of the killed script stop listening',
      );
    },
    60_000,
  );
});
