import { type ChildProcess, spawn } from 'node:child_process';
import net from 'node:net';
import { decode, encode, leading, type Message, type Value } from './dbus-wire.js';

/**
 * A desktop notification server for Chromium, so that a test can click a notification: Chromium on
 * Linux shows web notifications through `org.freedesktop.Notifications` on the session bus when
 * something owns that name (it asks, headless too), and takes that server's `ActionInvoked(id,
 * "default")` signal as the user's click, with the user activation a click gives (a worker may
 * then `clients.openWindow`). The DevTools protocol has no way to click a notification, and an
 * event a worker dispatches to itself is untrusted (`waitUntil` throws, `openWindow` is refused).
 *
 * Runs a private `dbus-daemon` and speaks just enough of the D-Bus wire protocol (little-endian,
 * no fds) to own the name and answer GetCapabilities, GetServerInformation, Notify and
 * CloseNotification. No D-Bus library: none is a dependency here.
 */

export interface Shown {
  id: number;
  title: string;
  body: string;
}

/** Starts a bus and the notification server on it; `address` goes in DBUS_SESSION_BUS_ADDRESS. */
export async function startNotificationServer() {
  const daemon: ChildProcess = spawn(
    'dbus-daemon',
    ['--session', '--nofork', '--nopidfile', '--print-address=1'],
    { stdio: ['ignore', 'pipe', 'ignore'] },
  );
  const address = await new Promise<string>((resolve, reject) => {
    let out = '';
    daemon.stdout?.on('data', (c: Buffer) => {
      out += c;
      if (out.includes('\n')) resolve(out.trim());
    });
    daemon.once('exit', (code) => reject(new Error(`dbus-daemon exited ${code}`)));
  });
  const path = /unix:path=([^,]+)/.exec(address)?.[1];
  const abstract = /unix:abstract=([^,]+)/.exec(address)?.[1];
  const socket = net.connect(path ?? `\0${abstract}`);
  await new Promise<void>((resolve, reject) =>
    socket.once('connect', resolve).once('error', reject),
  );

  // SASL EXTERNAL with our uid, then binary messages.
  const uid = String(process.getuid?.() ?? 0);
  socket.write(`\0AUTH EXTERNAL ${Buffer.from(uid).toString('hex')}\r\n`);
  await new Promise<void>((resolve) => socket.once('data', () => resolve()));
  socket.write('BEGIN\r\n');

  let serial = 0;
  let buf = Buffer.alloc(0);
  const waiting = new Map<number, (m: Message) => void>();
  const shown: Shown[] = [];
  const closed: number[] = [];
  let nextId = 0;
  const send = (
    type: number,
    fields: Array<[number, string, string | number]>,
    sig = '',
    values: Value[] = [],
  ) => {
    const s = ++serial;
    socket.write(encode(type, s, fields, sig, values));
    return s;
  };
  const call = (member: string, sig = '', values: Value[] = []) =>
    new Promise<Message>((resolve) => {
      const s = send(
        1,
        [
          [1, 'o', '/org/freedesktop/DBus'],
          [2, 's', 'org.freedesktop.DBus'],
          [3, 's', member],
          [6, 's', 'org.freedesktop.DBus'],
        ],
        sig,
        values,
      );
      waiting.set(s, resolve);
    });
  const reply = (to: Message, sig = '', values: Value[] = []) =>
    send(
      2,
      [
        [5, 'u', to.serial],
        [6, 's', to.sender ?? ''],
      ],
      sig,
      values,
    );

  socket.on('data', (chunk: Buffer) => {
    buf = Buffer.concat([buf, chunk]);
    for (let d = decode(buf); d; d = decode(buf)) {
      buf = buf.subarray(d.size);
      const m = d.message;
      if ((m.type === 2 || m.type === 3) && m.replySerial !== undefined) {
        waiting.get(m.replySerial)?.(m);
        waiting.delete(m.replySerial);
      }
      if (m.type !== 1) continue;
      if (m.member === 'GetCapabilities') reply(m, 'as', [['actions', 'body']]);
      else if (m.member === 'GetServerInformation')
        reply(m, 'ssss', ['herald-test', 'herald', '1.0', '1.2']);
      else if (m.member === 'Notify') {
        const [, replaces, , title, body] = leading(m.body, m.signature ?? '');
        const id = (replaces as number) || ++nextId;
        shown.push({ id, title: title as string, body: body as string });
        reply(m, 'u', [id]);
      } else if (m.member === 'CloseNotification') {
        closed.push(leading(m.body, 'u')[0] as number);
        reply(m);
      } else
        send(
          3,
          [
            [4, 's', 'org.freedesktop.DBus.Error.UnknownMethod'],
            [5, 'u', m.serial],
            [6, 's', m.sender ?? ''],
          ],
          's',
          [`no ${m.member}`],
        );
    }
  });

  await call('Hello');
  const owned = await call('RequestName', 'su', ['org.freedesktop.Notifications', 4]);
  if (owned.type !== 2) throw new Error('could not own org.freedesktop.Notifications');

  return {
    address,
    shown,
    closed,
    /** The user clicks notification `id` (its body, not a button). */
    click(id: number) {
      send(
        4,
        [
          [1, 'o', '/org/freedesktop/Notifications'],
          [2, 's', 'org.freedesktop.Notifications'],
          [3, 's', 'ActionInvoked'],
        ],
        'us',
        [id, 'default'],
      );
    },
    close() {
      socket.destroy();
      daemon.kill();
    },
  };
}
