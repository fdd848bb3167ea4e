import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { openClient, type RunningEdge, type Stack, useEdgeStack } from './fixture.js';

let stack: Stack;
let edge: RunningEdge;

useEdgeStack((started) => {
  ({ stack, edge } = started);
});

const api = readFileSync(new URL('../../../docs/api.md', import.meta.url), 'utf8');
const documented = (code: number) => api.split('\n').some((l) => l.startsWith(`| ${code} |`));

/** Writes bytes under the WebSocket library, as a client that builds its own frames would. */
function writeRaw(client: { ws: unknown }, bytes: Buffer): void {
  (client.ws as { _socket: { write(b: Buffer): void } })._socket.write(bytes);
}

describe('close codes the WebSocket library sends for protocol errors', () => {
  it('closes with 1002 on an unmasked client frame, as docs/api.md says', async () => {
    const client = openClient(stack, edge.port);
    await client.opened;
    // A text frame "a" without the mask bit: clients must mask (RFC 6455 §5.1).
    writeRaw(client, Buffer.from([0x81, 0x01, 0x61]));
    expect((await client.closed).code).toBe(1002);
    expect(documented(1002)).toBe(true);
  });

  it('closes with 1002 on a reserved opcode', async () => {
    const client = openClient(stack, edge.port);
    await client.opened;
    // Opcode 0x3 is reserved; masked, with an empty payload.
    writeRaw(client, Buffer.from([0x83, 0x80, 1, 2, 3, 4]));
    expect((await client.closed).code).toBe(1002);
  });

  it('closes with 1007 on a text frame that is not UTF-8, as docs/api.md says', async () => {
    const client = openClient(stack, edge.port);
    await client.opened;
    client.ws.send(Buffer.from([0xff, 0xfe]), { binary: false });
    expect((await client.closed).code).toBe(1007);
    expect(documented(1007)).toBe(true);
  });

  // Found by an audit: both limits are the WebSocket library's, and were not in docs/api.md.
  it('closes with 1008 past 16,384 fragments of one message, as docs/api.md says', async () => {
    const client = openClient(stack, edge.port);
    await client.opened;
    // A text frame without FIN, then empty continuation frames (each masked, empty payload).
    const frames = [Buffer.from([0x01, 0x80, 1, 2, 3, 4])];
    for (let i = 0; i < 16_384; i++) frames.push(Buffer.from([0x00, 0x80, 1, 2, 3, 4]));
    writeRaw(client, Buffer.concat(frames));
    expect((await client.closed).code).toBe(1008);
    expect(documented(1008)).toBe(true);
  });

  it('drops a client that sends pings faster than it reads the pongs (over 60 pending)', async () => {
    const client = openClient(stack, edge.port);
    await client.opened;
    // 200 masked pings of 125 bytes in one write: the pongs cannot all be written at once.
    const ping = Buffer.concat([Buffer.from([0x89, 0x80 | 125, 1, 2, 3, 4]), Buffer.alloc(125)]);
    writeRaw(client, Buffer.concat(Array.from({ length: 200 }, () => ping)));
    // No close frame: the connection is cut, which a client sees as 1006.
    expect((await client.closed).code).toBe(1006);
    expect(api).toContain('more than 60 pings');
  });
});
