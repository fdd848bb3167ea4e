import { loadWs } from './load-ws.js';
import type { WebSocketConstructor, WebSocketLike } from './websocket-like.js';

// The types live apart so that load-ws.ts, which websocket.ts loads, needs nothing of this file.
export type { WebSocketConstructor, WebSocketLike } from './websocket-like.js';

export const OPEN = 1;

/**
 * Injected first, then the runtime's own (browsers, React Native, Node >= 22), and only then the
 * `ws` package, loaded on first use so neither browsers nor Node 22 ever load it.
 */
export async function resolveWebSocket(
  injected: WebSocketConstructor | undefined,
): Promise<WebSocketConstructor | undefined> {
  if (injected) return injected;
  const global = (globalThis as { WebSocket?: WebSocketConstructor }).WebSocket;
  if (typeof global === 'function') return global;
  return loadWs();
}

/** Closes a socket normally, ignoring one already closed or closing. */
export function closeQuietly(ws: WebSocketLike): void {
  try {
    ws.close(1000);
  } catch {
    // Already closed or closing: nothing to release.
  }
}

/**
 * Lets go of a socket: none of its events reach their handlers again, and it is closed unless
 * `keepOpen` (a frame's listeners are still running and its ack is still to be sent).
 */
export function release(ws: WebSocketLike, keepOpen: boolean): void {
  ws.onopen = null;
  ws.onmessage = null;
  ws.onclose = null;
  // Some implementations (ws) throw an unhandled 'error' when closed while connecting.
  ws.onerror = () => {};
  if (!keepOpen) closeQuietly(ws);
}

/** Sends a frame; false when the socket is not open or is going (a reconnect makes up for it). */
export function sendQuietly(ws: WebSocketLike | undefined, text: string): boolean {
  if (ws?.readyState !== OPEN) return false;
  try {
    ws.send(text);
    return true;
  } catch {
    return false;
  }
}
