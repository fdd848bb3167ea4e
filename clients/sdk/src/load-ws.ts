import type { WebSocketConstructor } from './websocket-like.js';

/** Node < 22 has no global WebSocket: use the optional `ws` peer dependency, if installed. */
export async function loadWs(): Promise<WebSocketConstructor | undefined> {
  try {
    const mod: { WebSocket?: unknown; default?: unknown } = await import('ws');
    const ctor = mod.WebSocket ?? mod.default;
    return typeof ctor === 'function' ? (ctor as WebSocketConstructor) : undefined;
  } catch {
    return undefined;
  }
}
