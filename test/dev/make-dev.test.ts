import type { ChildProcess } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CHROMIUM_ARGS, CHROMIUM_PATH } from '@herald/testkit/browser';
import { type Browser, chromium } from 'playwright-core';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { finished, Namespace } from './namespace.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
/** Generous: `make dev` initialises Postgres and builds the dashboard on two shared cores. */
const START_TIMEOUT = 300_000;
const UI_TIMEOUT = 60_000;

/** A long-running command's output so far, and a wait for a line of it. */
class Output {
  text = '';
  readonly #exited: Promise<number | null>;

  constructor(readonly child: ChildProcess) {
    child.stdout?.on('data', (d) => {
      this.text += String(d);
    });
    child.stderr?.on('data', (d) => {
      this.text += String(d);
    });
    this.#exited = new Promise((resolve) => child.on('close', resolve));
  }

  /** Resolves with the first match of `pattern`; fails if the command ends first, or at timeout. */
  async waitFor(pattern: RegExp, timeoutMs: number): Promise<RegExpExecArray> {
    const deadline = Date.now() + timeoutMs;
    let ended = false;
    void this.#exited.then(() => {
      ended = true;
    });
    for (;;) {
      const m = pattern.exec(this.text);
      if (m) return m;
      if (ended || Date.now() > deadline) {
        throw new Error(
          `${ended ? 'it ended' : 'timed out'} before printing ${pattern}; it printed:\n${this.text}`,
        );
      }
      await new Promise((r) => setTimeout(r, 200));
    }
  }

  exited(): Promise<number | null> {
    return this.#exited;
  }
}

/** The environment a user's shell would give make: not the test runner's own variables. */
function userEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (k === 'NODE_ENV' || k === 'NODE_OPTIONS' || k.startsWith('VITEST') || k === 'TEST')
      continue;
    env[k] = v;
  }
  return env;
}

/**
 * The newcomer's path through README.md and clients/react/example/README.md, run as written:
 * `make dev`, then `make example`, the URL it prints opened in real Chromium, the curl it prints
 * run in a shell; then `make stop` after `make dev` was killed with -9. All of it in a network and
 * mount namespace of its own (namespace.ts): the stack binds its real, fixed ports on a private
 * loopback, with its own empty .data/, so a `make dev` running on this machine is not touched.
 */
describe('make dev, make example and make stop, as the READMEs say', () => {
  let ns: Namespace;
  let browser: Browser | undefined;
  let dev: Output | undefined;
  let example: Output | undefined;
  let data: string;

  beforeAll(async () => {
    // .data/: the stack's state. The dashboard's dist/ and the React package's Vite cache: build
    // outputs other tests write at the same time (and a first visit must find no cache).
    ns = await Namespace.open(
      ROOT,
      ['.data', 'clients/dashboard/dist', 'clients/react/node_modules/.vite'],
      userEnv(),
    );
    data = ns.overlay('.data');
  });

  afterAll(async () => {
    await browser?.close();
    await ns?.close();
  });

  const pidOf = (name: string) => Number(readFileSync(join(data, 'run', `${name}.pid`), 'utf8'));

  it(
    'make dev refuses a busy port 8450 (the Daraja simulator) before NATS and Postgres start',
    async () => {
      const blocker = new Output(
        ns.spawn(
          `exec node -e "require('net').createServer().listen(8450, '127.0.0.1', () => console.log('listening'))"`,
          ROOT,
        ),
      );
      await blocker.waitFor(/listening/, UI_TIMEOUT);
      const run = await finished(ns.spawn('make dev', ROOT));
      expect(run.code).not.toBe(0);
      expect(run.stderr).toMatch(
        /port 8450 \(Daraja simulator\) is already in use on 127\.0\.0\.1 by pid \d+ \(node\)/,
      );
      // Nothing was started: no NATS (its pid file), no Postgres cluster, nothing left running.
      expect(existsSync(join(data, 'run', 'nats.pid'))).toBe(false);
      expect(existsSync(join(data, 'pg', 'PG_VERSION'))).toBe(false);
      expect((await ns.processes()).map((p) => p.pid)).toEqual([blocker.child.pid]);
      blocker.child.kill('SIGKILL');
      await blocker.exited();
    },
    START_TIMEOUT,
  );

  it(
    'make dev, then make example: the printed URL shows a green bell, and the printed curl rings it',
    async () => {
      dev = new Output(ns.spawn('make dev', ROOT));
      await dev.waitFor(/^Herald is running/m, START_TIMEOUT);
      expect(dev.text).toContain('make example');
      // Beside the other HERALD_* lines, for backends: the address only, never a credential.
      expect(dev.text).toMatch(/^HERALD_NATS_URL=nats:\/\/127\.0\.0\.1:\d+$/m);
      // Webhooks may go to a receiver on this machine, and make dev says so in one line; the key
      // sealing their secrets is made once and kept with the data, readable by its owner only.
      expect(dev.text).toMatch(/^dev: webhooks: WEBHOOK_ALLOW_PRIVATE=true .*production must not/m);
      expect(statSync(join(data, 'webhook-secret.key')).mode & 0o777).toBe(0o600);
      expect(
        Buffer.from(readFileSync(join(data, 'webhook-secret.key'), 'utf8').trim(), 'base64'),
      ).toHaveLength(32);

      example = new Output(ns.spawn('make example', ROOT));
      const [, url] = await example.waitFor(/^Open (https:\/\/\S+)$/m, START_TIMEOUT);
      const [, curl] = await example.waitFor(/^ {2}(curl .*\/notify)$/m, UI_TIMEOUT);
      expect(url).toBe('https://localhost:5173/');

      // Chromium runs inside too, to reach the private loopback; like the other browser tests it
      // skips trusting make dev's CA (a user imports .data/tls/ca.crt, as make dev prints).
      browser = await chromium.launch({
        executablePath: await ns.wrapper(CHROMIUM_PATH),
        args: [...CHROMIUM_ARGS],
      });
      const page = await browser.newPage({ viewport: { width: 480, height: 520 } });
      const failed: string[] = [];
      let loads = 0;
      page.on('response', (r) => {
        if (r.status() >= 400) failed.push(`${r.status()} ${r.url()}`);
      });
      page.on('requestfailed', (r) => failed.push(`${r.failure()?.errorText} ${r.url()}`));
      page.on('console', (m) => {
        if (m.type() === 'error') failed.push(m.text());
      });
      page.on('framenavigated', (f) => {
        if (f === page.mainFrame()) loads++;
      });
      const bell = (state = '') =>
        page.locator(`button[aria-haspopup]${state && `[data-state="${state}"]`}`);

      await page.goto(url as string);
      await bell('connected').waitFor({ timeout: UI_TIMEOUT });

      const sent = await ns.run(curl as string, ROOT);
      expect(sent.code, sent.stderr).toBe(0);
      expect(JSON.parse(sent.stdout)).toMatchObject({ status: 'sent' });
      await page
        .locator('[data-herald-badge]', { hasText: /^1$/ })
        .waitFor({ timeout: UI_TIMEOUT });
      await bell().click();
      await page
        .locator('.note-title', { hasText: 'Hello from curl' })
        .waitFor({ timeout: UI_TIMEOUT });
      // One load: no dependency found late and re-bundled with a reload; nothing refused.
      expect(loads).toBe(1);
      expect(failed).toEqual([]);
      // It runs inside too: gone before the next test counts what is left there.
      await browser.close();
      browser = undefined;
    },
    2 * START_TIMEOUT,
  );

  it(
    'make dev sends a signed webhook to an http:// receiver on loopback (WEBHOOK_ALLOW_PRIVATE)',
    async () => {
      if (!dev) throw new Error('needs the stack the test before started');
      // A receiver inside the namespace, printing each request as one JSON line, answering 204.
      const receiver = new Output(
        ns.spawn(
          `exec node -e "require('http').createServer((q,r)=>{let b='';q.on('data',(c)=>b+=c);q.on('end',()=>{console.log(JSON.stringify({h:q.headers,b}));r.writeHead(204).end()})}).listen(9090,'127.0.0.1',()=>console.log('listening'))"`,
          ROOT,
        ),
      );
      await receiver.waitFor(/listening/, UI_TIMEOUT);
      const demo = Object.fromEntries(
        readFileSync(join(data, 'demo.env'), 'utf8')
          .split('\n')
          .filter((l) => l.includes('='))
          .map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]),
      );
      const created = await ns.run(
        `npm run -s admin -- webhook create --account ${demo.HERALD_ACCOUNT_ID} --url http://127.0.0.1:9090/hooks --events event.queued --json`,
        ROOT,
      );
      expect(created.code, created.stderr).toBe(0);
      const endpoint = JSON.parse(created.stdout) as { secret: string };
      const body = JSON.stringify({
        recipient: demo.HERALD_RECIPIENT,
        payload: { hello: 'webhook' },
        api_key: demo.HERALD_TEST_KEY,
        client: 'mobile',
      });
      const sent = await ns.run(
        `curl -sS --cacert .data/tls/ca.crt -H 'content-type: application/json' -d '${body}' ${demo.HERALD_BASE_URL}/notify`,
        ROOT,
      );
      expect(sent.code, sent.stderr).toBe(0);
      const { id } = JSON.parse(sent.stdout) as { id: string };
      const [line] = await receiver.waitFor(/^\{"h":.*$/m, UI_TIMEOUT);
      const got = JSON.parse(line) as { h: Record<string, string>; b: string };
      const verified = new Webhook(endpoint.secret).verify(got.b, got.h) as {
        type: string;
        data: { id: string };
      };
      expect(verified.type).toBe('event.queued');
      expect(verified.data.id).toBe(id);
      expect(got.h['webhook-id']).toBe(`${id}:event.queued`);
      receiver.child.kill('SIGKILL');
      await receiver.exited();
    },
    START_TIMEOUT,
  );

  it(
    'make stop, after make dev was killed with -9, leaves no process of the stack running',
    async () => {
      if (!dev) throw new Error('needs the stack the test before started');
      const before = await ns.processes();
      // The processes make dev left to make stop: the Daraja simulator among them.
      expect(before.some((p) => p.cmd.includes('lib/payments/src/simulator/main.ts'))).toBe(true);
      expect(before.some((p) => p.cmd.includes('nats-server'))).toBe(true);
      process.kill(pidOf('dev'), 'SIGKILL');
      await dev.exited();

      const stop = await finished(ns.spawn('make stop', ROOT));
      expect(stop.code, stop.stderr).toBe(0);
      expect((await ns.processes()).map((p) => `${p.pid} ${p.cmd}`)).toEqual([]);
      // The example ended with the stack (its server was recorded in .data/run too).
      expect(await example?.exited()).toBe(0);
    },
    START_TIMEOUT,
  );
});
