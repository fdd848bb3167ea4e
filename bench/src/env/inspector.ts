import http from 'node:http';
import WebSocket from 'ws';

export interface ProcessMemory {
  rss: number;
  heapUsed: number;
  heapTotal: number;
  external: number;
  arrayBuffers: number;
}

/**
 * Reads a server process's memory after a full garbage collection, through the V8 inspector
 * (Chrome DevTools Protocol) it was started with. The same call measures Herald's edge and the
 * baseline servers, none of which needs code of its own for it.
 */
export async function memoryAfterGc(inspectPort: number, gcRounds = 2): Promise<ProcessMemory> {
  const target = await debuggerUrl(inspectPort);
  const ws = new WebSocket(target, { perMessageDeflate: false });
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('error', reject);
  });
  let nextId = 1;
  const pending = new Map<number, (msg: { result?: unknown; error?: unknown }) => void>();
  ws.on('message', (data) => {
    const msg = JSON.parse(data.toString()) as { id?: number; result?: unknown; error?: unknown };
    if (msg.id !== undefined) pending.get(msg.id)?.(msg);
  });
  const call = (method: string, params: Record<string, unknown> = {}) =>
    new Promise<unknown>((resolve, reject) => {
      const id = nextId++;
      const timer = setTimeout(() => reject(new Error(`inspector ${method} timed out`)), 30_000);
      pending.set(id, (msg) => {
        clearTimeout(timer);
        pending.delete(id);
        if (msg.error) reject(new Error(`inspector ${method}: ${JSON.stringify(msg.error)}`));
        else resolve(msg.result);
      });
      ws.send(JSON.stringify({ id, method, params }));
    });
  try {
    // Two rounds: the first can leave weak and finalisable objects for the second to collect.
    for (let i = 0; i < gcRounds; i++) await call('HeapProfiler.collectGarbage');
    const result = (await call('Runtime.evaluate', {
      expression: 'JSON.stringify(process.memoryUsage())',
      returnByValue: true,
    })) as { result: { value: string } };
    return JSON.parse(result.result.value) as ProcessMemory;
  } finally {
    ws.close();
  }
}

function debuggerUrl(port: number): Promise<string> {
  return new Promise((resolve, reject) => {
    http
      .get({ host: '127.0.0.1', port, path: '/json/list', agent: false }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const list = JSON.parse(Buffer.concat(chunks).toString()) as Array<{
            webSocketDebuggerUrl?: string;
          }>;
          const url = list[0]?.webSocketDebuggerUrl;
          if (url) resolve(url);
          else reject(new Error(`no inspector target on port ${port}`));
        });
      })
      .on('error', reject);
  });
}
