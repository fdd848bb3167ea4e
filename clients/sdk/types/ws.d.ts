// The SDK's sources see `ws` through this stub, mapped in tsconfig.json: load-ws.ts reads only
// the constructor, and the real typings would pull Node's types into browser code.
declare const WebSocket: unknown;
export default WebSocket;
export { WebSocket };
