/**
 * One event handed to one socket, and what the socket reports about it. The socket calls
 * `written` when the frame left the process, then exactly one of `proven` (the client proved
 * receipt: a herald.v1 ack of its id, or in plain framing the pong of a ping sent after it) or
 * `lost` (the socket closed first, or the write failed). A live delivery may also be told
 * `overdue` once, while still unproven after LIVE_PROOF_TIMEOUT_MS; `proven` or `lost` still
 * follows.
 */
export interface Delivery {
  /** Live deliveries get a proof deadline; queued ones are covered by JetStream's redelivery. */
  readonly live: boolean;
  written(): void;
  /**
   * `device`: the `device` the proving socket connected with, if any (a `delivered` status record
   * names it, for the account's webhooks).
   */
  proven(device?: string): void;
  lost(): void;
  overdue(): void;
}
