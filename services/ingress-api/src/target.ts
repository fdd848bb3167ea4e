import type { PushContent, VerifiedKey } from '@herald/proto';

/** The event a dispatch delivers: the verified key, its recipient and the payload's bytes. */
export interface Target {
  key: VerifiedKey;
  account: string;
  recipient: string;
  payload: Uint8Array;
  /** The event's `push` field (issue 40); only a key with push settings reads it. */
  push?: PushContent | undefined;
  /** A topic event's copy (issue 44): its topic (the event's `Herald-Topic`) and topic event's id. */
  topic?: { name: string; id: string } | undefined;
}
