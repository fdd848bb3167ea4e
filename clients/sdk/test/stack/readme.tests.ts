import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { DispatchStatus } from '@herald/sdk';
import { openSocket } from '@herald/testkit';
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
 * "In your app" snippet run there as written, pointed at this stack instead of make dev's ports;
 * likewise docs/sdk.md's Node example and its "Tokens in production" routes and `getToken`.
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
          // For docs/sdk.md's "Tokens in production" Express route.
          'express@5',
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

    it('"Tokens in production": the Express and Next.js routes sign tokens the edge takes, and getToken uses them', async () => {
      const { stack, newKey, herald } = ctx();
      const key = await newKey({ requireToken: true });
      const to = recipient();
      const env = {
        ...process.env,
        NODE_EXTRA_CA_CERTS: stack.caFile,
        HERALD_SIGNING_SECRET: key.signing_secret as string,
        USER_ID: to,
      };
      // TypeScript's one non-null assertion, so plain Node runs the snippets as written.
      const plainJs = (code: string) =>
        code.replaceAll('HERALD_SIGNING_SECRET!', 'HERALD_SIGNING_SECRET');
      /** The snippet with `prelude` (its free names, as an app has them) after its imports. */
      const withPrelude = (code: string, prelude: string[]) => {
        const lines = plainJs(code).split('\n');
        const body = lines.findIndex((l) => !l.startsWith('import '));
        return [...lines.slice(0, body), ...prelude, ...lines.slice(body)].join('\n');
      };

      // Express: the app's login middleware sets req.user.
      const express = withPrelude(await snippet('docs/sdk.md', '### Express'), [
        'const requireLogin = (req, _res, next) => { req.user = { id: process.env.USER_ID }; next(); };',
      ]);
      await writeFile(
        join(project, 'express-app.mjs'),
        `${express}\nconst server = app.listen(0, '127.0.0.1', () => console.log('PORT', server.address().port));\n`,
      );
      const app = spawn(process.execPath, ['express-app.mjs'], { cwd: project, env });
      children.push(app);
      let said = '';
      app.stdout.on('data', (d) => {
        said += String(d);
      });
      app.stderr.on('data', (d) => {
        said += String(d);
      });
      await eventually(() => /PORT \d+/.test(said), `the Express app listening (${said})`, 30_000);
      const tokenUrl = `http://127.0.0.1:${/PORT (\d+)/.exec(said)?.[1]}/api/herald-token`;
      const fromExpress = (await (await fetch(tokenUrl)).json()) as { token: string };
      await opensWith(stack, key.key, to, fromExpress.token);

      // Next.js: a route handler is a function of the request; auth() is the app's session helper.
      const next = withPrelude(
        (await snippet('docs/sdk.md', '### Next.js (App Router)'))
          .split('\n')
          .filter((l) => !l.includes("from '@/auth'"))
          .join('\n'),
        ['const auth = async () => ({ user: { id: process.env.USER_ID } });'],
      );
      await writeFile(join(project, 'route.mjs'), next);
      await writeFile(
        join(project, 'call-route.mjs'),
        "import { GET } from './route.mjs';\nconst res = await GET();\nconsole.log(res.status, res.headers.get('cache-control'), JSON.stringify(await res.json()));\n",
      );
      const { stdout } = await run(process.execPath, ['call-route.mjs'], { cwd: project, env });
      const [status, cache, body] = stdout.trim().split(' ');
      expect([status, cache]).toEqual(['200', 'no-store']);
      await opensWith(stack, key.key, to, (JSON.parse(body ?? '{}') as { token: string }).token);

      // The browser's getToken, calling the Express route. In Node there is no page Origin, which a
      // web key is held to, so the snippet runs with this mobile key.
      const client = withPrelude(
        (await snippet('docs/sdk.md', '### In the browser: `getToken`'))
          .replace("'hk_live_…'", JSON.stringify(key.key))
          .replace("client: 'web'", "client: 'mobile'")
          .replace("'https://herald.example.com'", JSON.stringify(stack.baseUrl))
          .replace("'wss://herald.example.com'", JSON.stringify(stack.wsUrl))
          .replace("'/api/herald-token'", JSON.stringify(tokenUrl)),
        [
          'const currentUser = { id: process.env.USER_ID };',
          "const showNotification = (p) => { console.log('EVENT', JSON.stringify(p)); setTimeout(() => process.exit(0), 200); };",
        ],
      );
      await writeFile(
        join(project, 'client.mjs'),
        `${client}\nherald.onConnectionChange((s) => console.log(s));\n`,
      );
      const page = spawn(process.execPath, ['client.mjs'], { cwd: project, env });
      children.push(page);
      let out = '';
      page.stdout.on('data', (d) => {
        out += String(d);
      });
      page.stderr.on('data', (d) => {
        out += String(d);
      });
      await eventually(() => out.includes('connected'), `connected with a token (${out})`, 30_000);
      const sent = await herald({ apiKey: key.key }).notify({
        recipient: to,
        payload: { signed: true },
      });
      expect(sent.status).toBe(DispatchStatus.sent);
      await eventually(() => out.includes('EVENT {"signed":true}'), 'the event printed', 20_000);
    }, 120_000);
  });
}

/** Opens a socket of `to` with `token` and closes it: the edge took the token. */
async function opensWith(stack: SdkStack['stack'], apiKey: string, to: string, token: string) {
  expect(token).toMatch(/^[\w-]+\.[\w-]+\.[\w-]+$/);
  const socket = openSocket(stack.wsUrl, stack.ca, { apiKey, recipient: to, token });
  await socket.opened;
  await socket.close();
}
