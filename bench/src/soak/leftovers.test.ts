import { describe, expect, it } from 'vitest';
import { recipientSubscriptions } from './leftovers.js';

describe('recipientSubscriptions', () => {
  it('picks the subscriptions with a token equal to a known recipient, never a part of one', () => {
    const r = 'a1b2c3d4-0000-4000-8000-000000000001';
    const subjects = [
      `rt.live.acct1.${r}`,
      `rt.inbox.unread.acct1.${r}`,
      'rt.dispatch.acct1',
      `rt.live.acct1.${r}x`,
      '_INBOX.abc.*',
    ];
    expect(recipientSubscriptions(subjects, new Set([r]))).toEqual([
      `rt.live.acct1.${r}`,
      `rt.inbox.unread.acct1.${r}`,
    ]);
    expect(recipientSubscriptions(subjects, new Set())).toEqual([]);
  });
});
