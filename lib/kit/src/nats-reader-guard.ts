import { Parser } from 'nats/lib/nats-base-client/parser.js';
import { NodeTransport } from 'nats/lib/src/node_transport.js';

/**
 * Keeps bytes read on a closed NATS connection away from the connection that replaced it.
 *
 * nats.js (2.29) reads each connection with a loop over its transport that parses every chunk with
 * `protocol.parser`, looked up per chunk; a redial (`prepare()`) puts a fresh parser there. When a
 * transport closes while its loop still holds chunks (read in one burst, handed over one microtask
 * hop at a time) and the redial goes to another cluster node at once, the old loop feeds its
 * leftover bytes to the new connection's parser. A leftover that starts a message (`MSG s 1 40\r\n`
 * and part of the payload) leaves that parser reading the new connection's first messages as the
 * rest of the payload: a subscriber gets `{"run":"…MSG $KV.…` (seen in the cluster fault test, with
 * nats.js's `reader closed Error: parse error` logged beside it).
 *
 * The guard tags every chunk with the transport that read it and has the parser drop a chunk whose
 * transport is no longer its connection's: those bytes belong to a connection that is gone, as if
 * it had died a moment earlier (JetStream redelivers what was unacknowledged; core NATS is at most
 * once either way). One WeakMap entry per socket read.
 */
const readBy = new WeakMap<Uint8Array, object>();
let installed = false;

/** The part of nats.js's protocol handler the parser reaches: its current transport. */
interface ParserOwner {
  transport?: object;
}

/** Installs the guard once per process; throws when nats.js no longer has the shape it patches. */
export function installNatsReaderGuard(): void {
  if (installed) return;
  const transport = NodeTransport.prototype as unknown as {
    iterate(this: NodeTransport): AsyncIterableIterator<Uint8Array>;
  };
  const parser = Parser.prototype as unknown as {
    parse(this: Parser, buf: Uint8Array): void;
  };
  if (typeof transport.iterate !== 'function' || typeof parser.parse !== 'function')
    throw new Error(
      'nats.js changed: NodeTransport.iterate or Parser.parse is gone (nats-reader-guard.ts)',
    );
  const iterate = transport.iterate;
  transport.iterate = async function* guardedIterate(this: NodeTransport) {
    for await (const chunk of iterate.call(this)) {
      readBy.set(chunk, this);
      yield chunk;
    }
  };
  const parse = parser.parse;
  parser.parse = function guardedParse(this: Parser, buf: Uint8Array): void {
    const from = readBy.get(buf);
    if (from !== undefined && from !== (this.dispatcher as unknown as ParserOwner).transport)
      return;
    parse.call(this, buf);
  };
  installed = true;
}
