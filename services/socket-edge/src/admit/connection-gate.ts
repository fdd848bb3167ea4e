import type { VerifiedKey } from '@herald/proto';

/**
 * Admission of a socket beyond authentication: the seam where the per-account concurrent-connection
 * cap plugs in. `admit` resolves when the socket may open, or throws a HeraldError
 * (`connection_limit` gives 429 / 4429). Every admitted socket is released exactly once, when it
 * closes or fails to open.
 */
export interface ConnectionGate {
  admit(key: VerifiedKey, recipient: string): Promise<void> | void;
  release(key: VerifiedKey, recipient: string): void;
}
