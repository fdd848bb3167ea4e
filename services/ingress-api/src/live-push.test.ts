import { LiveReply } from '@herald/proto';
import { describe, expect, it } from 'vitest';
import { liveReplySockets } from './live-push.js';

describe('liveReplySockets', () => {
  it('accepts exactly what the LiveReply schema accepts', () => {
    const values: unknown[] = [
      { v: 1, sockets: 1 },
      { v: 1, sockets: 3 },
      { v: 1, sockets: 2, extra: 'kept apart' },
      { v: 1, sockets: 0 },
      { v: 1, sockets: -1 },
      { v: 1, sockets: 1.5 },
      { v: 1, sockets: '1' },
      { v: 1, sockets: Number.NaN },
      { v: 1, sockets: Number.POSITIVE_INFINITY },
      { v: 2, sockets: 1 },
      { v: '1', sockets: 1 },
      { sockets: 1 },
      { v: 1 },
      [1, 1],
      null,
      undefined,
      'sent',
      1,
    ];
    for (const value of values) {
      const parsed = LiveReply.safeParse(value);
      expect(liveReplySockets(value), JSON.stringify(value)).toBe(
        parsed.success ? parsed.data.sockets : undefined,
      );
    }
  });
});
