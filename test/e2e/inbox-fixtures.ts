import { dirname, join } from 'node:path';
import {
  freePort,
  type KeyObject,
  type ServiceProcess,
  type Stack,
  startServiceProcess,
  type TestSocket,
} from '@herald/testkit';
import { connect, eventually, type Tenant } from './fixtures.js';

/** An inbox key (`--inbox-days`) of a fresh account: its one Test key, mobile. */
export async function inboxTenant(stack: Stack, days = 7): Promise<Tenant> {
  const { id } = await stack.createAccount();
  return { account: id, key: await stack.createKey({ account: id, inboxDays: days }) };
}

/**
 * A paid account with two Live mobile keys side by side: `plain` without inbox mode and `inbox`
 * with it.
 */
export async function twoKeys(
  stack: Stack,
): Promise<{ account: string; plain: KeyObject; inbox: KeyObject }> {
  const { id } = await stack.createAccount({ plan: 'hobby' });
  const plain = await stack.createKey({ account: id, kind: 'live' });
  const inbox = await stack.createKey({ account: id, kind: 'live', inboxDays: 7 });
  return { account: id, plain, inbox };
}

/** A herald.v1 socket of `to` (with `device` when given), open. */
export function v1Socket(
  stack: Stack,
  key: KeyObject,
  to: string,
  opts: { device?: string; autoAck?: boolean; wsUrl?: string } = {},
): Promise<TestSocket> {
  const q = new URLSearchParams({ api_key: key.key, recipient: to, client: 'mobile' });
  if (opts.device !== undefined) q.set('device', opts.device);
  return connect({ ...stack, wsUrl: opts.wsUrl ?? stack.wsUrl } as Stack, {
    apiKey: key.key,
    recipient: to,
    v1: true,
    query: q.toString(),
    ...(opts.autoAck === undefined ? {} : { autoAck: opts.autoAck }),
  });
}

type Envelope = { type: string; [k: string]: unknown };

/** Every frame of `type` the socket received, in order. */
export function framesOf(socket: TestSocket, type: string): Envelope[] {
  return socket.frames.flatMap((f) =>
    (f.envelope as Envelope | undefined)?.type === type ? [f.envelope as Envelope] : [],
  );
}

/** Waits until the socket's last inbox frame says `unread`. */
export function unreadIs(socket: TestSocket, unread: number, what: string): Promise<void> {
  return eventually(
    () => framesOf(socket, 'inbox').at(-1)?.unread === unread,
    `${what}: unread ${unread} (frames: ${socket.frames.map((f) => f.text).join(' ')})`,
  );
}

/** Sends a client frame and waits for the next frame of `type` (history or error) it answers. */
export async function ask(socket: TestSocket, frame: unknown, type: string): Promise<Envelope> {
  const before = framesOf(socket, type).length;
  socket.ws.send(JSON.stringify(frame));
  await eventually(() => framesOf(socket, type).length > before, `a ${type} frame`);
  return framesOf(socket, type)[before] as Envelope;
}

/** Event ids the socket received, in order. */
export const idsOf = (socket: TestSocket): string[] => socket.events().map((e) => e.id);

/** A second socket-edge process on the same stack (its own port), as a second host runs it. */
export async function startSecondEdge(
  stack: Stack,
): Promise<{ proc: ServiceProcess; wsUrl: string }> {
  const port = await freePort();
  const certs = dirname(stack.caFile);
  const proc = await startServiceProcess(
    'socket-edge',
    port,
    {
      ...stack.nats.env('socket-edge'),
      TLS_CERT_FILE: join(certs, 'tls.crt'),
      TLS_KEY_FILE: join(certs, 'tls.key'),
    },
    stack.ca,
  );
  return { proc, wsUrl: `wss://127.0.0.1:${port}` };
}
