import type { WebSocketConstructor } from './websocket-like.js';

/** The browser and React Native build: never `ws`, which needs Node built-ins. */
export async function loadWs(): Promise<WebSocketConstructor | undefined> {
  return undefined;
}
