import { type NatsServer, startNatsServer } from '@herald/testkit';
import { connect, type NatsConnection } from 'nats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { installNatsReaderGuard } from './nats-reader-guard.js';

/** nats.js's transport internals the test reaches to hand a closed connection's loop late bytes. */
interface Internals {
  protocol: { transport: { yields: Uint8Array[]; signal: { resolve(): void } } };
}

let nats: NatsServer;
let nc: NatsConnection;

beforeAll(async () => {
  installNatsReaderGuard();
  nats = await startNatsServer();
  nc = await connect({ ...nats.connectOptions(), maxReconnectAttempts: -1, reconnectTimeWait: 50 });
});

afterAll(async () => {
  await nc?.close();
  await nats?.stop();
});

async function statusOf(conn: NatsConnection, type: string): Promise<void> {
  for await (const s of conn.status()) if (s.type === type) return;
}

describe('installNatsReaderGuard', () => {
  it('keeps what a replaced connection read away from the connection that replaced it', async () => {
    const sub = nc.subscribe('guard.t', { max: 1 });
    await nc.flush();
    const replaced = (nc as unknown as Internals).protocol.transport;
    const reconnected = statusOf(nc, 'reconnect');
    await nc.reconnect();
    await reconnected;
    await nc.flush();
    expect((nc as unknown as Internals).protocol.transport).not.toBe(replaced);

    // The replaced connection's reader still waits for data: hand it the head of a message whose
    // tail never came, as a read burst cut by the close does. Unguarded, the new connection's
    // parser takes it and reads the next message's bytes as the rest of its 20-byte payload.
    replaced.yields.push(new TextEncoder().encode('MSG guard.t 1 20\r\n{"head":'));
    replaced.signal.resolve();
    await new Promise((resolve) => setImmediate(resolve));

    nc.publish('guard.t', '{"ok":true}');
    const got: string[] = [];
    for await (const m of sub) got.push(new TextDecoder().decode(m.data));
    expect(got).toEqual(['{"ok":true}']);
  }, 30_000);
});
