// Handlers typed as methods compare their parameters bivariantly, so the DOM's, React Native's,
// undici's and the `ws` package's WebSocket classes all fit without casts (React's types use the
// same device for event handlers).
type Handler<E> = { bivarianceHack(event: E): void }['bivarianceHack'];

/** The part of the standard WebSocket the SDK uses. */
export interface WebSocketLike {
  readonly readyState: number;
  onopen: Handler<unknown> | null;
  onmessage: Handler<{ data: unknown }> | null;
  onclose: Handler<{ code: number; reason: string }> | null;
  onerror: Handler<unknown> | null;
  send(data: string): void;
  close(code?: number, reason?: string): void;
}

/** A standard WebSocket constructor: the global one, `ws`, or a subclass (e.g. adding `{ ca }`). */
export type WebSocketConstructor = new (
  url: string,
  protocols?: string | string[],
) => WebSocketLike;
