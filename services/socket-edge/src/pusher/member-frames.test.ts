import { describe, expect, it } from 'vitest';
import { EventFrames } from '../socket/framing.js';
import { memberFrame, withHeraldId } from './member-frames.js';

const frames = (payload: string, id = 'ev-1') =>
  new EventFrames({ id, ts: 1, data: new TextEncoder().encode(payload) });

describe('withHeraldId', () => {
  it('splices the id in first, the rest byte for byte', () => {
    expect(withHeraldId('{"a": 1,  "b":[2]}', 'X')).toBe('{"herald_id":"X","a": 1,  "b":[2]}');
    expect(withHeraldId('  { "a":1 }', 'X')).toBe('  {"herald_id":"X", "a":1 }');
  });

  it('adds no comma to an empty object', () => {
    expect(withHeraldId('{}', 'X')).toBe('{"herald_id":"X"}');
    expect(withHeraldId('{ }', 'X')).toBe('{"herald_id":"X" }');
    expect(JSON.parse(withHeraldId('{ }', 'X'))).toEqual({ herald_id: 'X' });
  });

  it('leaves anything that is not a JSON object as it is', () => {
    for (const data of ['hello', '[1,2]', '"{x}"', '{not json', '42', '', 'null']) {
      expect(withHeraldId(data, 'X')).toBe(data);
    }
  });
});

describe('memberFrame', () => {
  it('sends a Pusher envelope as its event and data, on the channel chosen', () => {
    const payload = JSON.stringify({
      event: 'order.shipped',
      channel: '#server-to-user-7',
      data: '{"order":5}',
    });
    const seen: Array<string | undefined> = [];
    const frame = memberFrame(frames(payload), (c) => {
      seen.push(c);
      return c ?? 'none';
    });
    expect(seen).toEqual(['#server-to-user-7']);
    expect(JSON.parse(frame.data.toString())).toEqual({
      event: 'order.shipped',
      channel: '#server-to-user-7',
      data: '{"herald_id":"ev-1","order":5}',
    });
    expect(frame.bytes).toBe(frame.data.byteLength);
  });

  it('sends any other payload as herald:event with its JSON text, once per channel', () => {
    const event = frames('{"n": 1}', 'ev-2');
    const a = memberFrame(event, () => 'private-App.Models.User.7');
    expect(JSON.parse(a.data.toString())).toEqual({
      event: 'herald:event',
      channel: 'private-App.Models.User.7',
      data: '{"herald_id":"ev-2","n": 1}',
    });
    expect(memberFrame(event, () => 'private-App.Models.User.7')).toBe(a);
    const b = memberFrame(event, () => '#server-to-user-7');
    expect(JSON.parse(b.data.toString()).channel).toBe('#server-to-user-7');
  });

  it('keeps a string data that is not an object as sent', () => {
    const payload = JSON.stringify({ event: 'e', data: 'plain text' });
    const frame = memberFrame(frames(payload), () => 'c');
    expect(JSON.parse(frame.data.toString())).toEqual({
      event: 'e',
      channel: 'c',
      data: 'plain text',
    });
  });
});
