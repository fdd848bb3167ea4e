import { CloseCodes, closeCodeOf, type ErrorFrame, type HeraldError } from '@herald/proto';
import { WebSocket } from 'ws';
import type { Framing } from './framing.js';

/**
 * Closes a socket for a policy reason with `4000 + status`. A herald.v1 client first gets an
 * ErrorFrame (the full message and field); the close reason carries only the code, because close
 * reasons are limited to 123 bytes, and the Retry-After seconds when the refusal has them
 * (`{"code":"too_many_connects","retry_after":1}`): a browser cannot read an upgrade's headers,
 * but it can read a close reason, so this is where it learns how long to wait.
 */
export function closeWithError(ws: WebSocket, err: HeraldError, framing: Framing): void {
  if (ws.readyState !== ws.OPEN) return;
  if (framing === 'herald.v1') {
    const frame: ErrorFrame = { type: 'error', error: err.toBody().error };
    ws.send(JSON.stringify(frame));
  }
  ws.close(closeCodeOf(err.code), closeReason(err));
}

/** `{"code":…}`, plus `retry_after` (whole seconds) when the error has one: at most ~70 bytes. */
export function closeReason(err: HeraldError): string {
  return JSON.stringify(
    err.retryAfter === undefined
      ? { code: err.code }
      : { code: err.code, retry_after: err.retryAfter },
  );
}

/** Closes every WebSocket with 1001 (going away), terminating those that do not finish within graceMs. */
export async function closeSockets(sockets: WebSocket[], graceMs: number): Promise<void> {
  const done = sockets.map((ws) =>
    ws.readyState === WebSocket.CLOSED
      ? Promise.resolve()
      : new Promise<void>((resolve) => ws.once('close', () => resolve())),
  );
  for (const ws of sockets) {
    if (ws.readyState === WebSocket.OPEN) ws.close(CloseCodes.goingAway, 'going away');
  }
  let timer: NodeJS.Timeout | undefined;
  const grace = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, graceMs);
  });
  await Promise.race([Promise.all(done), grace]);
  clearTimeout(timer);
  for (const ws of sockets) if (ws.readyState !== WebSocket.CLOSED) ws.terminate();
  await Promise.all(done);
}
