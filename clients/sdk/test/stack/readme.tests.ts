import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { DispatchStatus } from '@herald/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, recipient, type SdkStack } from './context.js';

const run = promisify(execFile);
const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', '..');

/** The first ```ts block under `heading` in a markdown file: the snippet exactly as documented. */
export async function snippet(file: string, heading: string): Promise<string> {
  const text = await readFile(join(ROOT, file), 'utf8');
  const section = text.slice(text.indexOf(`${heading}\n`));
  const match = /```ts\n([\s\S]*?)```/.exec(section);
  if (!match?.[1]) throw new Error(`no ts block under ${heading} in ${file}`);
  return match[1];
}

/**
 * The path docs/sdk.md gives a newcomer, since the package is not on the registry: `npm pack` of
 * the built package, installed into an empty project (with `ws`, for Node 20), then the README's
 * "In your app" snippet run there as written, pointed at this stack instead of make dev's ports.
 */
export function readmeTests(ctx: () => SdkStack): void {
  describe('README and docs snippets from an npm-packed install', () => {
    let project: string;
    const children: ChildProcess[] = [];

    beforeAll(async () => {
      project = await mkdtemp(join(tmpdir(), 'herald-sdk-readme-'));
      await run('npm', ['pack', '-w', '@herald/sdk', '--pack-destination', project], { cwd: ROOT });
      await writeFile(
        join(project, 'package.json'),
        JSON.stringify({ name: 'newcomer', private: true, type: 'module' }),
      );
      await run(
        'npm',
        [
          'install',
          '--prefer-offline',
          '--no-audit',
          '--no-fund',
          '--loglevel=error',
          './herald-sdk-0.1.0.tgz',
          'ws@8',
        ],
        { cwd: project },
      );
    }, 180_000);

    afterAll(async () => {
      for (const c of children) c.kill();
      if (project) await rm(project, { recursive: true, force: true });
    });

    it('the README snippet connects with make-dev style URLs and shows an event', async () => {
      const { stack, key, herald } = ctx();
      const code = (await snippet('README.md', '## In your app'))
        .replace("'https://localhost:8443'", JSON.stringify(stack.baseUrl))
        .replace("'wss://localhost:8444'", JSON.stringify(stack.wsUrl));
      // The snippet's free names, as an app would have them.
      const prelude = [
        'const apiKey = process.env.HERALD_TEST_KEY;',
        'const userId = process.env.USER_ID;',
        // Exits a moment after the listener returns: the SDK acks then, and only that ack makes
        // the dispatch a 200 (an app that dies inside its listener never had the event).
        "const showNotification = (p) => { console.log('EVENT', JSON.stringify(p)); setTimeout(() => process.exit(0), 200); };",
      ].join('\n');
      const [imports, ...body] = code.split('\n');
      await writeFile(join(project, 'app.mjs'), `${imports}\n${prelude}\n${body.join('\n')}`);
      const to = recipient();
      const child = spawn(process.execPath, ['app.mjs'], {
        cwd: project,
        env: {
          ...process.env,
          NODE_EXTRA_CA_CERTS: stack.caFile,
          HERALD_TEST_KEY: key.key,
          USER_ID: to,
        },
      });
      children.push(child);
      const exit = new Promise<number | null>((resolve) => child.on('exit', resolve));
      let out = '';
      child.stdout.on('data', (d) => {
        out += String(d);
      });
      child.stderr.on('data', (d) => {
        out += String(d);
      });
      await eventually(
        () => out.includes('connected'),
        `"connected" from the snippet (${out})`,
        30_000,
      );
      const result = await herald().notify({ recipient: to, payload: { hello: 'readme' } });
      expect(result.status).toBe(DispatchStatus.sent);
      await eventually(() => out.includes('EVENT'), 'the event printed', 20_000);
      expect(await exit).toBe(0);
      expect(out).toContain('EVENT {"hello":"readme"}');
    });

    it("docs/sdk.md's Node example dispatches to the stack as written", async () => {
      const { stack, key } = ctx();
      const code = (await snippet('docs/sdk.md', '## Node'))
        .replace("'https://herald.example.com'", JSON.stringify(stack.baseUrl))
        // The one TypeScript-only token, so plain Node runs it.
        .replace('process.env.HERALD_API_KEY!', 'process.env.HERALD_API_KEY');
      const [imports, ...body] = code.split('\n');
      const prelude =
        "const log = { info: (o, m) => console.log('INFO', m), warn: (o, m) => console.log('WARN', m) };";
      await writeFile(join(project, 'notify.mjs'), `${imports}\n${prelude}\n${body.join('\n')}`);
      const { stdout } = await run(process.execPath, ['notify.mjs'], {
        cwd: project,
        env: { ...process.env, NODE_EXTRA_CA_CERTS: stack.caFile, HERALD_API_KEY: key.key },
      });
      expect(stdout.trim()).toBe('INFO User offline, notification saved');
    });
  });
}
