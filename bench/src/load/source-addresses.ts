/**
 * Loopback source addresses 127.0.0.1..N, handed out round-robin for the whole run. One address
 * has ~28k ephemeral ports towards one server port, and every closed client socket holds its port
 * in TIME_WAIT for a minute, so ramps of tens of thousands of connections spread over several.
 */
export class SourceAddresses {
  readonly #count: number;
  #next = 0;

  constructor(count: number) {
    if (!Number.isInteger(count) || count < 1 || count > 254) {
      throw new RangeError(`source address count must be 1..254, got ${count}`);
    }
    this.#count = count;
  }

  next(): string {
    const host = (this.#next++ % this.#count) + 1;
    return `127.0.0.${host}`;
  }
}
