import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { queueSlot, recipientSubjectKind, recipientSubjects, subjects } from './subjects.js';

const ACCOUNT = '0b6a5d3e-7c41-4f2a-9d0e-1a2b3c4d5e6f';
const RECIPIENT = '9f8e7d6c-5b4a-4c3d-8e2f-0a1b2c3d4e5f';

/** NATS subject matching, as the server does it for `*` and literal tokens. */
function matches(pattern: string, subject: string): boolean {
  const p = pattern.split('.');
  const s = subject.split('.');
  return p.length === s.length && p.every((t, i) => t === '*' || t === s[i]);
}

describe("a recipient's subjects", () => {
  const pattern = subjects.recipient(ACCOUNT, RECIPIENT);

  it('cover its live and queued-notice subjects, and tell them apart', () => {
    expect(matches(pattern, subjects.live(ACCOUNT, RECIPIENT))).toBe(true);
    expect(matches(pattern, subjects.queued(ACCOUNT, RECIPIENT))).toBe(true);
    expect(recipientSubjectKind(subjects.live(ACCOUNT, RECIPIENT))).toBe('live');
    expect(recipientSubjectKind(subjects.queued(ACCOUNT, RECIPIENT))).toBe('queued');
  });

  it('cover no other recipient, no other account, and no queue, dispatch or status subject', () => {
    expect(matches(pattern, subjects.live(RECIPIENT, ACCOUNT))).toBe(false);
    expect(matches(pattern, subjects.queued(ACCOUNT, ACCOUNT))).toBe(false);
    expect(matches(pattern, subjects.queue(ACCOUNT, RECIPIENT))).toBe(false);
    expect(matches(pattern, subjects.dispatchBatch(ACCOUNT))).toBe(false);
    expect(matches(pattern, subjects.status(ACCOUNT))).toBe(false);
    // The one other subject of this shape: published to by nobody since partitioning, and ignored.
    expect(matches(pattern, subjects.legacyQueue(ACCOUNT, RECIPIENT))).toBe(true);
    expect(recipientSubjectKind(subjects.legacyQueue(ACCOUNT, RECIPIENT))).toBeUndefined();
  });

  it('refuse ids that are not subject tokens', () => {
    expect(() => subjects.recipient(ACCOUNT, '*')).toThrow(TypeError);
    expect(() => subjects.recipient('a.b', RECIPIENT)).toThrow(TypeError);
  });
});

describe('recipientSubjects', () => {
  it('gives the strings and slot subjects.live/queue/queued and queueSlot give one by one', () => {
    for (let i = 0; i < 500; i++) {
      const account = randomUUID();
      const recipient = randomUUID();
      expect(recipientSubjects(account, recipient)).toEqual({
        live: subjects.live(account, recipient),
        queue: subjects.queue(account, recipient),
        queued: subjects.queued(account, recipient),
        slot: queueSlot(account, recipient),
      });
    }
  });

  it('refuses a bad token with the same TypeError as subjects.live', () => {
    const good = randomUUID();
    for (const [account, recipient] of [
      ['not-a-uuid', good],
      [good, 'a.b'],
      [good.toUpperCase(), good],
      [good, `${good}*`],
    ] as const) {
      const theirs = (() => {
        try {
          subjects.live(account, recipient);
        } catch (err) {
          return err;
        }
      })();
      expect(theirs).toBeInstanceOf(TypeError);
      expect(() => recipientSubjects(account, recipient)).toThrow(theirs as TypeError);
    }
  });
});
