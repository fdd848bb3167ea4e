import type { VerifiedKey } from '@herald/proto';

/** The event a dispatch delivers: the verified key, its recipient and the payload's bytes. */
export interface Target {
  key: VerifiedKey;
  account: string;
  recipient: string;
  payload: Uint8Array;
}
