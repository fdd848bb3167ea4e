import { Match, MsgHdrsImpl } from 'nats';
import { describe, expect, it } from 'vitest';
import { EventMsgHdrs } from './event-headers.js';

const text = (bytes: Uint8Array) => new TextDecoder().decode(bytes);

describe('EventMsgHdrs', () => {
  it('encodes the bytes nats.js encodes for the same headers, before and after more are added', () => {
    const ours = new EventMsgHdrs().add('Herald-Id', 'abc').add('Herald-Ts', ' 123 ');
    const theirs = new MsgHdrsImpl();
    theirs.set('Herald-Id', 'abc');
    theirs.set('Herald-Ts', ' 123 ');
    expect(text(ours.encode())).toBe(text(theirs.encode()));
    ours.add('Nats-Msg-Id', 'acct:key 3').add('Nats-Expected-Stream', 'HERALD_Q_1');
    theirs.set('Nats-Msg-Id', 'acct:key 3');
    theirs.set('Nats-Expected-Stream', 'HERALD_Q_1');
    expect(text(ours.encode())).toBe(text(theirs.encode()));
    expect(ours.get('Herald-Ts')).toBe('123');
    expect(ours.get('nats-msg-id', Match.IgnoreCase)).toBe('acct:key 3');
  });

  it('encodes once until a header changes', () => {
    const h = new EventMsgHdrs([['Herald-Id', 'a']]);
    const first = h.encode();
    expect(h.encode()).toBe(first);
    h.add('Herald-Ts', '1');
    expect(h.encode()).not.toBe(first);
    expect(text(h.encode())).toBe('NATS/1.0\r\nHerald-Id: a\r\nHerald-Ts: 1\r\n\r\n');
  });

  it("falls back to nats.js's encoding after set, append, delete or a repeated key", () => {
    const h = new EventMsgHdrs().add('Herald-Id', 'a').add('Herald-Ts', '1');
    h.add('Herald-Id', 'b');
    expect(text(h.encode())).toBe('NATS/1.0\r\nHerald-Ts: 1\r\nHerald-Id: b\r\n\r\n');
    h.append('Herald-Ts', '2');
    h.delete('Herald-Id');
    expect(text(h.encode())).toBe('NATS/1.0\r\nHerald-Ts: 1\r\nHerald-Ts: 2\r\n\r\n');
  });

  it('refuses a value with a line break, as nats.js does', () => {
    expect(() => new EventMsgHdrs().add('Herald-Id', 'a\r\nX: y')).toThrow(/\\r and \\n/);
  });

  it('encodes byte for byte what TextEncoder and nats.js encode, non-ASCII values included', () => {
    const values = ['abc', 'acct:kéy ✓ 3', ' 123 ', '😀'];
    const ours = new EventMsgHdrs();
    const theirs = new MsgHdrsImpl();
    for (const [i, v] of values.entries()) {
      ours.add(`X-H${i}`, v);
      theirs.set(`X-H${i}`, v);
      const bytes = ours.encode();
      expect(bytes).toBeInstanceOf(Uint8Array);
      expect(Buffer.from(bytes).equals(Buffer.from(theirs.encode()))).toBe(true);
      const text = `NATS/1.0${values
        .slice(0, i + 1)
        .map((x, j) => `\r\nX-H${j}: ${x.trim()}`)
        .join('')}\r\n\r\n`;
      expect(Buffer.from(bytes).equals(Buffer.from(new TextEncoder().encode(text)))).toBe(true);
    }
  });
});
