import { execFile } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { recipient, type SdkStack } from './context.js';

const run = promisify(execFile);
const FIXTURE = join(
  dirname(fileURLToPath(import.meta.url)),
  'fixtures',
  'exit-after-disconnect.cjs',
);

export function processExitTests(ctx: () => SdkStack): void {
  describe('Node runtime', () => {
    it('CJS build, lazily loaded ws, global fetch: receives an event, and the process exits by itself after disconnect()', async () => {
      const { stack, key } = ctx();
      // execFile's timeout kills a process that hangs: a leaked timer or socket fails the test.
      const { stdout } = await run(
        process.execPath,
        [FIXTURE, stack.baseUrl, stack.wsUrl, key.key, recipient()],
        {
          env: { PATH: process.env.PATH ?? '', NODE_EXTRA_CA_CERTS: stack.caFile },
          timeout: 20_000,
        },
      );
      const lines = stdout
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l));
      // The notify answer and the event race each other; everything else is ordered.
      expect(lines.filter((l) => !('status' in l))).toEqual([
        { state: 'connected' },
        { received: { hello: 'child' } },
        { state: 'disconnected' },
        { connected: false },
      ]);
      expect(lines).toContainEqual({ status: 'sent' });
    });
  });
}
