/**
 * Lists what the edge holds per idle connection: starts a stack and an edge in this process, opens
 * N idle plain connections (each its own recipient, as bench figure 5 does) from a child process,
 * takes a heap snapshot before and after, and prints the per-connection difference by constructor
 * (count and self bytes). Not a test (no assertions): the object list in docs/benchmarks-history.md
 * ("Figures 5 and 6 ... branch conns") comes from it.
 *
 *   [DEVICE=1] [V1=1 | INBOX=1] node --conditions=herald-source --import tsx services/socket-edge/test/measure/idle-heap.ts [N]
 *
 * V1=1: the connections offer herald.v1; INBOX=1: herald.v1 with an inbox key (issue 32), whose
 * sockets hold an InboxSocket, and with DEVICE=1 a CatchUpFeed over the inbox (no inbox store runs
 * here: the connect's unread query and catch-up find no responder, which leaves what an idle
 * socket holds).
 */
import { fork, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import WebSocket from 'ws';

const N = Number(process.argv[2] ?? 2000);

if (process.env.IDLE_HEAP_CLIENT) {
  // The client side: opens the sockets, reports, and keeps them open until told to stop.
  const { url, ca, count } = JSON.parse(process.env.IDLE_HEAP_CLIENT) as {
    url: string;
    ca: string;
    count: number;
  };
  const sockets: WebSocket[] = [];
  let failed = 0;
  for (let i = 0; i < count; i += 50) {
    await Promise.all(
      Array.from({ length: Math.min(50, count - i) }, () => {
        // DEVICE=1: each connection names a device (issue 32), to measure what its CatchUpFeed holds.
        const device = process.env.DEVICE === '1' ? `&device=${randomUUID()}` : '';
        const v1 = process.env.V1 === '1' || process.env.INBOX === '1';
        const ws = new WebSocket(
          `${url}&recipient=${randomUUID()}${device}`,
          v1 ? ['herald.v1'] : [],
          {
            ca,
          },
        );
        sockets.push(ws);
        return new Promise<void>((resolve) => {
          ws.once('open', () => resolve());
          ws.once('error', () => {
            failed++;
            resolve();
          });
        });
      }),
    );
  }
  process.send?.({ opened: sockets.length - failed, failed });
  process.on('message', () => {
    for (const ws of sockets) ws.terminate();
    process.exit(0);
  });
} else {
  const { keys: known, startStack } = await import('../fixture.js');
  const keys = { mobileA: process.env.INBOX === '1' ? known.inboxA : known.mobileA };
  const stack = await startStack();
  const edge = await spawnEdge(
    stack.nats.env('socket-edge'),
    stack.certs.certFile,
    stack.certs.keyFile,
  );
  try {
    // Warm the paths once (code, caches) so the difference is per connection, not first-use.
    await openFleet(edge.port, stack.certs.ca, 20, keys.mobileA).then((c) => c.stop());
    await new Promise((r) => setTimeout(r, 1500));
    const before = await edge.snapshot();
    const fleet = await openFleet(edge.port, stack.certs.ca, N, keys.mobileA);
    await new Promise((r) => setTimeout(r, 1500));
    const after = await edge.snapshot();
    console.log(`${fleet.opened} opened, ${fleet.failed} failed`);
    const rows: Array<[string, number, number]> = [];
    for (const [name, a] of after) {
      const b = before.get(name) ?? { count: 0, size: 0 };
      const dc = (a.count - b.count) / fleet.opened;
      const ds = (a.size - b.size) / fleet.opened;
      if (Math.abs(ds) >= 8 || Math.abs(dc) >= 0.5) rows.push([name, dc, ds]);
    }
    rows.sort((x, y) => y[2] - x[2]);
    let total = 0;
    for (const [name, dc, ds] of rows) {
      total += ds;
      console.log(`${ds.toFixed(0).padStart(7)} B  ${dc.toFixed(2).padStart(6)}×  ${name}`);
    }
    console.log(`${total.toFixed(0).padStart(7)} B  total of the rows above`);
    await fleet.stop();
  } finally {
    edge.stop();
    await stack.stop();
  }
}

/**
 * The edge as production runs it (dist/main.js; from source through tsx with IDLE_HEAP_SOURCE=1,
 * whose keepNames helper gives every named closure a dictionary of its own and inflates the
 * figures), writing a heap snapshot on SIGUSR2 into a directory of its own.
 */
async function spawnEdge(natsEnv: Record<string, string>, certFile: string, keyFile: string) {
  const dir = mkdtempSync(join(tmpdir(), 'idle-heap-'));
  const root = fileURLToPath(new URL('../..', import.meta.url));
  const source = process.env.IDLE_HEAP_SOURCE === '1';
  const child = spawn(
    process.execPath,
    [
      '--heapsnapshot-signal=SIGUSR2',
      // tsx by its resolved URL: the edge runs in a directory of its own, where `tsx` resolves to nothing.
      ...(source ? ['--conditions=herald-source', '--import', import.meta.resolve('tsx')] : []),
      join(root, source ? 'src/main.ts' : 'dist/main.js'),
    ],
    {
      cwd: dir,
      stdio: ['ignore', 'pipe', 'inherit'],
      env: {
        ...process.env,
        ...natsEnv,
        TLS_CERT_FILE: certFile,
        TLS_KEY_FILE: keyFile,
        HOST: '127.0.0.1',
        PORT: '0',
        OPS_PORT: '0',
        LOG_LEVEL: process.env.IDLE_HEAP_LOG ?? 'info',
      },
    },
  );
  const ports = await new Promise<{ port: number; opsPort: number }>((resolve, reject) => {
    let buf = '';
    child.stdout?.on('data', (d: Buffer) => {
      buf += d.toString();
      if (process.env.IDLE_HEAP_LOG) process.stderr.write(d);
      for (const line of buf.split('\n')) {
        if (line.includes('"listening"'))
          resolve(JSON.parse(line) as { port: number; opsPort: number });
      }
    });
    child.once('exit', (code) => reject(new Error(`edge exited with ${code}`)));
  });
  let taken = 0;
  return {
    port: ports.port,
    async snapshot() {
      child.kill('SIGUSR2');
      taken++;
      // The snapshot is written synchronously on the main thread: /healthz answers once it is done.
      await new Promise((r) => setTimeout(r, 200));
      for (;;) {
        const suffix = `.${String(taken).padStart(3, '0')}.heapsnapshot`;
        const files = readdirSync(dir).filter((f) => f.endsWith(suffix));
        const ok = await fetch(`http://127.0.0.1:${ports.opsPort}/healthz`).then(
          (r) => r.ok,
          () => false,
        );
        if (files.length === 1 && ok) {
          const file = join(dir, files[0] as string);
          const counts = byConstructor(file);
          if (process.env.IDLE_HEAP_KEEP) console.log(`snapshot kept: ${file}`);
          else rmSync(file);
          return counts;
        }
        await new Promise((r) => setTimeout(r, 200));
      }
    },
    stop() {
      child.kill('SIGTERM');
    },
  };
}

async function openFleet(port: number, ca: Buffer | string, count: number, apiKey: string) {
  const url = `wss://127.0.0.1:${port}/ws/connect?api_key=${apiKey}&client=mobile`;
  const child = fork(process.argv[1] as string, [], {
    execArgv: ['--conditions=herald-source', '--import', 'tsx'],
    env: { ...process.env, IDLE_HEAP_CLIENT: JSON.stringify({ url, ca: String(ca), count }) },
  });
  const result = await new Promise<{ opened: number; failed: number }>((resolve) =>
    child.once('message', (m) => resolve(m as { opened: number; failed: number })),
  );
  return {
    ...result,
    stop: () =>
      new Promise<void>((resolve) => {
        child.once('exit', () => resolve());
        child.send('stop');
      }),
  };
}

/** Count and self size of the snapshot's nodes by constructor (closures by their function name). */
function byConstructor(file: string): Map<string, { count: number; size: number }> {
  const snap = JSON.parse(readFileSync(file, 'utf8')) as {
    snapshot: { meta: { node_fields: string[]; node_types: [string[]] } };
    nodes: number[];
    strings: string[];
  };
  const fields = snap.snapshot.meta.node_fields;
  const types = snap.snapshot.meta.node_types[0];
  const width = fields.length;
  const iType = fields.indexOf('type');
  const iName = fields.indexOf('name');
  const iSize = fields.indexOf('self_size');
  const out = new Map<string, { count: number; size: number }>();
  for (let i = 0; i < snap.nodes.length; i += width) {
    const type = types[snap.nodes[i + iType] as number] ?? '?';
    let name = snap.strings[snap.nodes[i + iName] as number] ?? '?';
    if (type === 'string' || type === 'concatenated string' || type === 'sliced string')
      name = '(string)';
    else if (type === 'number') name = '(number)';
    else if (type === 'code') name = '(code)';
    else if (type === 'closure') name = `closure ${name}`;
    else if (type === 'array') name = `(array) ${name}`;
    else if (type === 'hidden' || type === 'object shape') name = `(${type}) ${name}`;
    const key = name.length > 80 ? name.slice(0, 80) : name;
    const e = out.get(key) ?? { count: 0, size: 0 };
    e.count++;
    e.size += snap.nodes[i + iSize] as number;
    out.set(key, e);
  }
  return out;
}
