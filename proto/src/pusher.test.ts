import { describe, expect, it } from 'vitest';
import { pusherSubjects, subjectSafe } from './pusher.js';

const ACCOUNT = '0b7f6c1e-4a8e-4c3b-9a51-2d5c8e7f1a20';

describe('pusherSubjects.channel', () => {
  it("encodes a channel name as Node's unpadded base64url of its UTF-8 bytes, in browsers too", () => {
    // Every padding length, both characters base64url replaces (+ and /), and multi-byte text.
    for (const name of [
      'a',
      'ab',
      'abc',
      'private-App.Models.User.7',
      '>>>???',
      'ü€😀',
      '#server-to-user-u',
    ]) {
      expect(subjectSafe(name)).toBe(Buffer.from(name, 'utf8').toString('base64url'));
    }
    expect(pusherSubjects.channel(ACCOUNT, '1234567890', 'news')).toBe(
      `rt.pch.${ACCOUNT}.1234567890.bmV3cw`,
    );
  });
});
