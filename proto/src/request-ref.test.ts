import { describe, expect, it } from 'vitest';
import {
  ErrorFrame,
  HistoryFrame,
  HistoryRequestFrame,
  InboxFrame,
  ReadFrame,
  ServerFrame,
} from './socket.js';

describe('the optional ref of herald.v1 inbox requests', () => {
  it('takes 1 to 64 characters of A-Z, a-z, 0-9, _ and -, and nothing else', () => {
    for (const ref of ['r', 'a-Z_9', 'x'.repeat(64)]) {
      expect(ReadFrame.safeParse({ type: 'read', all: true, ref }).success).toBe(true);
      expect(ReadFrame.safeParse({ type: 'read', ids: ['e'], ref }).success).toBe(true);
      expect(
        HistoryRequestFrame.safeParse({ type: 'history', before: null, limit: 1, ref }).success,
      ).toBe(true);
    }
    for (const ref of ['', 'x'.repeat(65), 'a.b', 'é', 7]) {
      expect(ReadFrame.safeParse({ type: 'read', all: true, ref }).success).toBe(false);
      const history = HistoryRequestFrame.safeParse({
        type: 'history',
        before: null,
        limit: 1,
        ref,
      });
      expect(history.success).toBe(false);
      expect(history.error?.issues[0]?.path).toEqual(['ref']);
    }
  });

  it('leaves frames without ref as they were, and keeps it on the answers', () => {
    expect(ReadFrame.parse({ type: 'read', all: true })).toEqual({ type: 'read', all: true });
    expect(InboxFrame.parse({ type: 'inbox', unread: 2 })).toEqual({ type: 'inbox', unread: 2 });
    expect(ServerFrame.parse({ type: 'inbox', unread: 2, ref: 'r1' })).toEqual({
      type: 'inbox',
      unread: 2,
      ref: 'r1',
    });
    expect(HistoryFrame.parse({ type: 'history', events: [], next: null, ref: 'r2' }).ref).toBe(
      'r2',
    );
    const error = {
      type: 'error',
      error: { code: 'rate_limited', message: 'slow down' },
      ref: 'r3',
    };
    expect(ErrorFrame.parse(error)).toEqual(error);
  });
});
