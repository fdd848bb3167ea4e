/** What a socket close means for the next attempt. */
export type CloseAction = 'retry' | 'wait' | 'stop';

/**
 * 4400-4499 are refusals of this request (bad parameters, key, Origin, plan): retrying cannot
 * help, except 4429 (connection cap, connect rate), which clears later (backoff.ts says when),
 * and 4401 `token_expired` (a socket's recipient token lapsed: the reconnect asks for a fresh
 * one). Everything else (1001 edge shutdown, 1006 dropped network, 1013 slow consumer, 4503 edge
 * full, ...) is transient.
 */
export function closeAction(code: number, errorCode?: string): CloseAction {
  if (code === 4429) return 'wait';
  if (errorCode === 'token_expired') return 'retry';
  if (code >= 4400 && code < 4500) return 'stop';
  return 'retry';
}
