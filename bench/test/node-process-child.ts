/**
 * node-process.test.ts's child: starts one server the way the bench starts its servers, prints
 * its pid and port, and waits to be killed.
 */
import { freePort } from '@herald/testkit';
import { startServerProcess } from '../src/env/node-process.js';

const port = await freePort();
const server = await startServerProcess({
  name: 'tiny',
  argv: [
    process.execPath,
    '-e',
    `require('node:net').createServer().listen(${port}, '127.0.0.1', () => console.log('ready'))`,
  ],
  port,
  env: {},
  ready: { stdoutLine: /ready/ },
});
process.stdout.write(`${JSON.stringify({ pid: server.pid, port })}\n`);
setInterval(() => undefined, 60_000);
