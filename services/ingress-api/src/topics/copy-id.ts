import { createHash } from 'node:crypto';

/**
 * A member's copy of a topic event gets an id derived from the topic event's id and the
 * recipient (a name-based UUID, version 5, SHA-1): a chunk delivered again after a worker was
 * killed makes the same ids, so JetStream's duplicate window drops a second store and herald.v1
 * clients drop a second live copy.
 */
export function copyIdOf(topicEventId: string, recipient: string): string {
  const h = createHash('sha1').update(`${topicEventId}\n${recipient}`, 'utf8').digest();
  h[6] = ((h[6] ?? 0) & 0x0f) | 0x50;
  h[8] = ((h[8] ?? 0) & 0x3f) | 0x80;
  const x = h.subarray(0, 16).toString('hex');
  return `${x.slice(0, 8)}-${x.slice(8, 12)}-${x.slice(12, 16)}-${x.slice(16, 20)}-${x.slice(20)}`;
}
