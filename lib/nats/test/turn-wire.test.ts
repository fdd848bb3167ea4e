import { connect, headers, type Msg, type NatsConnection, NatsError } from 'nats';
import { describe, expect, it } from 'vitest';
import { EventMsgHdrs } from '../src/event-headers.js';
import { TurnPublisher } from '../src/turn-publisher.js';
import { useCorePair } from './core-pair.js';

const pair = useCorePair();

const turnEnd = () => new Promise<void>((resolve) => setImmediate(resolve));

interface Protocol {
  sendCommand(cmd: string | Uint8Array, ...payloads: Uint8Array[]): void;
  outMsgs: number;
  outBytes: number;
}
const protocolOf = (c: NatsConnection) => (c as unknown as { protocol: Protocol }).protocol;

/** Every byte `c` hands to nats.js's outbound buffer while `run` goes, as nats.js encodes it. */
async function wireBytes(c: NatsConnection, run: () => Promise<void>) {
  const proto = protocolOf(c);
  const original = proto.sendCommand;
  const seen: Buffer[] = [];
  proto.sendCommand = function (cmd, ...payloads) {
    seen.push(Buffer.from(typeof cmd === 'string' ? new TextEncoder().encode(cmd) : cmd));
    for (const p of payloads) seen.push(Buffer.from(p));
    original.call(this, cmd, ...payloads);
  };
  const before = { msgs: proto.outMsgs, bytes: proto.outBytes };
  try {
    await run();
  } finally {
    proto.sendCommand = original;
  }
  return {
    bytes: Buffer.concat(seen),
    msgs: proto.outMsgs - before.msgs,
    outBytes: proto.outBytes - before.bytes,
  };
}

/** One turn of every kind of message ingress and the edge publish, and the refusals. */
function oneTurn(publisher: TurnPublisher, errors: string[]) {
  const onError = (err: unknown) => errors.push(err instanceof NatsError ? err.code : String(err));
  const eventHeaders = new EventMsgHdrs()
    .add('Herald-Id', 'id-1')
    .add('Herald-Ts', '1700000000000');
  const changed = new EventMsgHdrs().add('Herald-Id', 'id-2');
  changed.set('Herald-Id', 'id-3'); // nats.js's own encoding from here on
  const plain = headers();
  plain.set('X-A', 'wörld ✓');
  publisher.publish(
    'wire.live',
    Buffer.from('{"a":"é"}'),
    { reply: '_INBOX.x.1', headers: eventHeaders },
    onError,
  );
  eventHeaders.add('Nats-Msg-Id', 'acct:kéy').add('Nats-Expected-Stream', 'S_1');
  publisher.publish(
    'wire.queue',
    new TextEncoder().encode('{"a":"é"}'),
    { reply: '_INBOX.x.2', headers: eventHeaders },
    onError,
  );
  publisher.publish('wire.notice', Buffer.from('{"v":1,"id":"id-1"}'));
  publisher.publish('wire.text', 'plain text ünïcode 😀', undefined, onError);
  publisher.publish('wire.empty', new Uint8Array(0), { reply: 'r.1' }, onError);
  publisher.publish('wire.headers', 'h', { headers: plain }, onError);
  publisher.publish('wire.changed', 'c', { headers: changed, reply: '' }, onError);
  publisher.publish('', 'no subject', undefined, onError);
  publisher.publish('wire.big', new Uint8Array(2 * 1024 * 1024), undefined, onError);
  publisher.publishBuilt('wire.built', () => Buffer.from('{"v":1,"records":[]}'));
  publisher.publish('wire.last', 'z', undefined, onError);
}

describe("TurnPublisher's turn bytes (real nats-server)", () => {
  it('hands nats.js the bytes its publish writes, with the same refusals and counters', async () => {
    const received: Record<string, string[]> = { old: [], wire: [] };
    let side = 'old';
    const sub = pair.peer.subscribe('wire.>', {
      callback: (_e, m: Msg) =>
        received[side]?.push(
          `${m.subject} ${m.reply ?? ''} ${m.headers ? [...m.headers.keys()].map((k) => `${k}=${m.headers?.get(k)}`).join('&') : '-'} ${Buffer.from(m.data).toString('base64')}`,
        ),
    });
    await pair.peer.flush();
    const errors: Record<string, string[]> = { old: [], wire: [] };
    const old = await wireBytes(pair.nc, async () => {
      oneTurn(new TurnPublisher(pair.nc, { wire: false }), errors.old as string[]);
      await turnEnd();
    });
    await pair.nc.flush();
    await pair.peer.flush();
    side = 'wire';
    const wire = await wireBytes(pair.nc, async () => {
      oneTurn(new TurnPublisher(pair.nc), errors.wire as string[]);
      await turnEnd();
    });
    await pair.nc.flush();
    await pair.peer.flush();
    sub.unsubscribe();
    expect(wire.bytes.toString('latin1')).toBe(old.bytes.toString('latin1'));
    expect(wire.bytes.equals(old.bytes)).toBe(true);
    expect(old.bytes.length).toBeGreaterThan(100);
    expect(errors.wire).toEqual(errors.old);
    expect(errors.old).toEqual(['BAD_SUBJECT', 'MAX_PAYLOAD_EXCEEDED']);
    expect(wire.msgs).toBe(old.msgs);
    expect(wire.outBytes).toBe(old.outBytes);
    expect(received.wire).toEqual(received.old);
    expect(received.old).toHaveLength(9);
  });

  it('refuses every message of a turn on a closed connection, and still builds built payloads', async () => {
    for (const wire of [false, true]) {
      const closed = await connect(pair.connectOptions());
      await closed.close();
      const publisher = new TurnPublisher(closed, { wire });
      const errors: string[] = [];
      let built = 0;
      publisher.publish('turn.closed', 'x', undefined, (err) =>
        errors.push((err as NatsError).code),
      );
      publisher.publishBuilt('turn.closed', () => {
        built++;
        return Buffer.from('y');
      });
      publisher.publish('turn.closed', 'z', undefined, (err) =>
        errors.push((err as NatsError).code),
      );
      await turnEnd();
      expect({ wire, errors, built }).toEqual({
        wire,
        errors: ['CONNECTION_CLOSED', 'CONNECTION_CLOSED'],
        built: 1,
      });
    }
  });
});
